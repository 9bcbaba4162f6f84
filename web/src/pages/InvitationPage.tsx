import { useState } from "preact/hooks"
import { acceptInvitation, getInvitation } from "../api/console"
import type { Session } from "../api/types"
import { Field } from "../components/Field"
import { ErrorNote, Loading } from "../components/Notice"
import { Link } from "../components/Link"
import { formatTime } from "../lib/dates"
import { useAction, useLoad } from "../lib/useLoad"

const minimumLength = 12

/** Accepting an invitation: choose a password (and a name), then be signed in. */
export const InvitationPage = ({ token, onSignedIn }: { readonly token: string; readonly onSignedIn: (session: Session) => void }) => {
  const [name, setName] = useState<string>("")
  const [password, setPassword] = useState("")
  const [repeated, setRepeated] = useState("")
  const [tried, setTried] = useState(false)
  const accept = useAction(acceptInvitation)
  const [invitation] = useLoad(() => getInvitation(token), [token])
  const tooShort = password.length < minimumLength
  const mismatch = repeated !== password
  return (
    <main class="narrow" id="main">
      <h1>Accept your invitation</h1>
      {invitation.state === "loading" ? <Loading /> : null}
      {invitation.state === "failed" ? (
        <p class="error" role="alert">
          {invitation.error.status === 410 || invitation.error.status === 404
            ? "This invitation link was already used, has expired or is not valid. Ask a workspace administrator for a new one."
            : invitation.error.message}
        </p>
      ) : null}
      {invitation.state === "ready" ? (
        <p>
          <strong>{invitation.value.email}</strong> is invited to <strong>{invitation.value.workspace.name}</strong> as {invitation.value.role}
          {" "}(link valid until {formatTime(invitation.value.expiresAt)}).{" "}
          {invitation.value.hasPassword ? "Choose a new password." : "Choose a password to finish setting up your account."} You will be signed in right away.
        </p>
      ) : null}
      <form
        class="card"
        noValidate
        onSubmit={async (event) => {
          event.preventDefault()
          setTried(true)
          if (tooShort || mismatch) return
          const session = await accept.run(token, password, name)
          if (session !== undefined) onSignedIn(session)
        }}
      >
        <Field label="Name" value={name} onInput={setName} autoComplete="name" hint="How your colleagues see you (optional)." />
        <Field
          label="Password"
          type="password"
          value={password}
          onInput={setPassword}
          required
          minLength={minimumLength}
          autoComplete="new-password"
          hint={`At least ${minimumLength} characters.`}
          error={tried && tooShort ? `The password must have at least ${minimumLength} characters.` : undefined}
        />
        <Field
          label="Repeat password"
          type="password"
          value={repeated}
          onInput={setRepeated}
          required
          autoComplete="new-password"
          error={tried && !tooShort && mismatch ? "The passwords differ." : undefined}
        />
        {accept.error?.status === 410 ? (
          <p class="error" role="alert">
            This invitation was already used or has expired. Ask a workspace administrator for a new one.
          </p>
        ) : <ErrorNote error={accept.error} />}
        <button type="submit" disabled={accept.running}>{accept.running ? "Setting password…" : "Set password"}</button>
      </form>
      <p><Link to="login">Already have an account? Sign in</Link></p>
    </main>
  )
}
