import { useState } from "preact/hooks"
import { acceptAsSignedIn, acceptWithCurrentPassword, acceptWithNewPassword, getInvitation } from "../api/console"
import type { ApiError } from "../api/client"
import type { Session } from "../api/types"
import { Field } from "../components/Field"
import { choiceProblems, NewPasswordFields } from "../components/NewPasswordFields"
import { ErrorNote, Loading } from "../components/Notice"
import { formatTime } from "../lib/dates"
import { useAction, useLoad } from "../lib/useLoad"

const spentLink = "This invitation link was already used, has expired or is not valid. Ask a workspace administrator for a new one."

/** A refusal of the acceptance: a spent link in plain words, anything else as the server said it. */
const Refusal = ({ error }: { readonly error: ApiError | null }) =>
  error?.status === 410 || error?.status === 404 ? <p class="error" role="alert">{spentLink}</p> : <ErrorNote error={error} />

interface InvitationPageProps {
  readonly token: string
  /** Who is signed in in this browser, if anyone: the invited person accepts with one click. */
  readonly session: Session | null | "loading"
  readonly onSignedIn: (session: Session) => void
}

/**
 * Accepting an invitation. The page does not know (and the server does not say) whether the email has an
 * account: it offers both ways. A new person chooses a password; a person with an account signs in with
 * their current one, or, signed in already as the invited email, accepts with a click.
 */
export const InvitationPage = ({ onSignedIn, session, token }: InvitationPageProps) => {
  const [invitation] = useLoad(() => getInvitation(token), [token])
  const [name, setName] = useState("")
  const [password, setPassword] = useState("")
  const [repeated, setRepeated] = useState("")
  const [current, setCurrent] = useState("")
  const [tried, setTried] = useState(false)
  const create = useAction(acceptWithNewPassword)
  const signIn = useAction(acceptWithCurrentPassword)
  const join = useAction(acceptAsSignedIn)
  const person = session === "loading" || session === null || session.operator ? null : session.member
  const invited = invitation.state === "ready" ? invitation.value : null
  const signedInAsInvitee = invited !== null && person !== null && person.email === invited.email

  const done = (next: Session | undefined) => {
    if (next !== undefined) onSignedIn(next)
  }

  return (
    <main class="narrow" id="main">
      <h1>Accept your invitation</h1>
      {invitation.state === "loading" || session === "loading" ? <Loading /> : null}
      {invitation.state === "failed" ? (
        <p class="error" role="alert">
          {invitation.error.status === 410 || invitation.error.status === 404 ? spentLink : invitation.error.message}
        </p>
      ) : null}
      {invited === null || session === "loading" ? null : (
        <>
          <p>
            <strong>{invited.email}</strong> is invited to <strong>{invited.workspace.name}</strong> as {invited.role}
            {" "}(link valid until {formatTime(invited.expiresAt)}).
          </p>
          {signedInAsInvitee ? (
            <div class="card">
              <h2>Join {invited.workspace.name}</h2>
              <p>You are signed in as <strong>{invited.email}</strong>.</p>
              <Refusal error={join.error} />
              <button type="button" disabled={join.running} onClick={async () => done(await join.run(token))}>
                {join.running ? "Accepting…" : "Accept invitation"}
              </button>
            </div>
          ) : (
            <>
              {person === null ? null : (
                <p class="notice" role="status">
                  You are signed in as {person.email}. This invitation is for {invited.email}: accepting it below signs you in as {invited.email}.
                </p>
              )}
              <form
                class="card"
                noValidate
                aria-labelledby="invitation-new"
                onSubmit={async (event) => {
                  event.preventDefault()
                  setTried(true)
                  if (Object.keys(choiceProblems(password, repeated)).length > 0) return
                  done(await create.run(token, password, name))
                }}
              >
                <h2 id="invitation-new">New here? Choose a password</h2>
                <Field label="Name" value={name} onInput={setName} autoComplete="name" hint={`How your colleagues see you (optional${invited.name === null ? "" : `; left empty, it is ${invited.name}`}).`} />
                <NewPasswordFields
                  label="Password"
                  repeatLabel="Repeat password"
                  password={password}
                  repeated={repeated}
                  onPassword={setPassword}
                  onRepeated={setRepeated}
                  tried={tried}
                  serverError={create.error?.field === "password" ? create.error.message : undefined}
                />
                {create.error?.field === "password" ? null : <Refusal error={create.error} />}
                <button type="submit" disabled={create.running}>{create.running ? "Setting password…" : "Set password"}</button>
              </form>
              <form
                class="card"
                aria-labelledby="invitation-existing"
                onSubmit={async (event) => {
                  event.preventDefault()
                  done(await signIn.run(token, current))
                }}
              >
                <h2 id="invitation-existing">Already have an account? Sign in to accept</h2>
                <p class="hint">Sign in as {invited.email} with your current password. Nothing of your account changes.</p>
                <Field label="Current password" type="password" value={current} onInput={setCurrent} required autoComplete="current-password" />
                <Refusal error={signIn.error} />
                <button type="submit" disabled={signIn.running}>{signIn.running ? "Signing in…" : "Sign in and accept"}</button>
              </form>
            </>
          )}
        </>
      )}
    </main>
  )
}
