import { useState } from "preact/hooks"
import { changePassword } from "../api/console"
import type { Person } from "../api/types"
import { Field } from "../components/Field"
import { Link } from "../components/Link"
import { choiceProblems, NewPasswordFields } from "../components/NewPasswordFields"
import { ErrorNote } from "../components/Notice"
import { useAction } from "../lib/useLoad"

/** The signed-in person changes their own password; their other sessions end, this one stays. */
export const ChangePasswordPage = ({ home, person }: { readonly person: Person; readonly home: string }) => {
  const [current, setCurrent] = useState("")
  const [password, setPassword] = useState("")
  const [repeated, setRepeated] = useState("")
  const [tried, setTried] = useState(false)
  const [changed, setChanged] = useState(false)
  // Answers true once changed: a void call's undefined would not tell success from failure.
  const change = useAction(async (currentPassword: string, newPassword: string) => {
    await changePassword(currentPassword, newPassword)
    return true as const
  })
  const fieldError = (field: string) =>
    change.error?.field !== field ? undefined : change.error.code === "wrong_password" ? "This is not your current password." : change.error.message
  return (
    <section>
      <h1>Change password</h1>
      <p class="lead">
        For {person.email}. When it changes, you are signed out everywhere else; you stay signed in here.
      </p>
      <div class="form-width">
        <form
          class="card"
          noValidate
          onSubmit={async (event) => {
            event.preventDefault()
            setTried(true)
            setChanged(false)
            if (current === "" || Object.keys(choiceProblems(password, repeated)).length > 0) return
            if ((await change.run(current, password)) === true) {
              setChanged(true)
              setTried(false)
              setCurrent("")
              setPassword("")
              setRepeated("")
            }
          }}
        >
          <Field
            label="Current password"
            type="password"
            value={current}
            onInput={setCurrent}
            required
            autoComplete="current-password"
            error={tried && current === "" ? "Enter your current password." : fieldError("currentPassword")}
          />
          <NewPasswordFields
            label="New password"
            repeatLabel="Repeat new password"
            password={password}
            repeated={repeated}
            onPassword={setPassword}
            onRepeated={setRepeated}
            tried={tried}
            serverError={fieldError("newPassword")}
          />
          {change.error === null || change.error.field !== undefined ? null : <ErrorNote error={change.error} />}
          <button type="submit" disabled={change.running}>{change.running ? "Changing…" : "Change password"}</button>
        </form>
        {changed ? <div class="success" role="status">Your password was changed. Every other session has ended.</div> : null}
      </div>
      <p><Link to={home}>Back to your workspace</Link></p>
    </section>
  )
}
