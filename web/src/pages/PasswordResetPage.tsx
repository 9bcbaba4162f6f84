import { useState } from "preact/hooks"
import { getPasswordReset, resetPassword } from "../api/console"
import type { Session } from "../api/types"
import { choiceProblems, NewPasswordFields } from "../components/NewPasswordFields"
import { ErrorNote, Loading } from "../components/Notice"
import { formatTime } from "../lib/dates"
import { useAction, useLoad } from "../lib/useLoad"

const spentLink = "This password-reset link was already used, has expired or is not valid. Ask the operator of this service for a new one."

/** The operator's one-time reset link: choose a new password, every other session ends, and be signed in. */
export const PasswordResetPage = ({ onSignedIn, token }: { readonly token: string; readonly onSignedIn: (session: Session) => void }) => {
  const [link] = useLoad(() => getPasswordReset(token), [token])
  const [password, setPassword] = useState("")
  const [repeated, setRepeated] = useState("")
  const [tried, setTried] = useState(false)
  const reset = useAction(resetPassword)
  return (
    <main class="narrow" id="main">
      <h1>Choose a new password</h1>
      {link.state === "loading" ? <Loading /> : null}
      {link.state === "failed" ? (
        <p class="error" role="alert">{link.error.status === 410 || link.error.status === 404 ? spentLink : link.error.message}</p>
      ) : null}
      {link.state !== "ready" ? null : (
        <>
          <p>
            For <strong>{link.value.email}</strong> (link valid until {formatTime(link.value.expiresAt)}). Setting it signs you out of
            every other browser and signs you in here.
          </p>
          <form
            class="card"
            noValidate
            onSubmit={async (event) => {
              event.preventDefault()
              setTried(true)
              if (Object.keys(choiceProblems(password, repeated)).length > 0) return
              const session = await reset.run(token, password)
              if (session !== undefined) onSignedIn(session)
            }}
          >
            <NewPasswordFields
              label="New password"
              repeatLabel="Repeat new password"
              password={password}
              repeated={repeated}
              onPassword={setPassword}
              onRepeated={setRepeated}
              tried={tried}
              serverError={reset.error?.field === "password" ? reset.error.message : undefined}
            />
            {reset.error?.status === 410 || reset.error?.status === 404
              ? <p class="error" role="alert">{spentLink}</p>
              : reset.error?.field === "password" ? null : <ErrorNote error={reset.error} />}
            <button type="submit" disabled={reset.running}>{reset.running ? "Setting password…" : "Set password"}</button>
          </form>
        </>
      )}
    </main>
  )
}
