import { useState } from "preact/hooks"
import { signIn, signInAsOperator } from "../api/console"
import type { Session } from "../api/types"
import { Field } from "../components/Field"
import { ErrorNote } from "../components/Notice"
import { useAction } from "../lib/useLoad"

interface LoginPageProps {
  readonly notice: string | null
  readonly onSignedIn: (session: Session) => void
}

/** Sign-in with email and password; the operator signs in with the admin token. */
export const LoginPage = ({ notice, onSignedIn }: LoginPageProps) => {
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [adminToken, setAdminToken] = useState("")
  const person = useAction(signIn)
  const operator = useAction(signInAsOperator)
  return (
    <main class="narrow" id="main">
      <h1>Sign in to the Workspace API console</h1>
      {notice === null ? null : <p class="notice" role="status">{notice}</p>}
      <form
        class="card"
        onSubmit={async (event) => {
          event.preventDefault()
          const session = await person.run(email.trim(), password)
          if (session !== undefined) onSignedIn(session)
        }}
      >
        <Field label="Email" type="email" value={email} onInput={setEmail} required autoComplete="username" />
        <Field label="Password" type="password" value={password} onInput={setPassword} required autoComplete="current-password" />
        <ErrorNote error={person.error} />
        <button type="submit" disabled={person.running}>{person.running ? "Signing in…" : "Sign in"}</button>
        <p class="hint">Forgot your password? Ask the operator of this service for a password-reset link.</p>
      </form>
      <details class="card">
        <summary>Operator sign-in</summary>
        <form
          onSubmit={async (event) => {
            event.preventDefault()
            const session = await operator.run(adminToken.trim())
            if (session !== undefined) onSignedIn(session)
          }}
        >
          <Field label="Admin token" type="password" value={adminToken} onInput={setAdminToken} required autoComplete="off" />
          <ErrorNote error={operator.error} />
          <button type="submit" disabled={operator.running}>Sign in with admin token</button>
        </form>
      </details>
    </main>
  )
}
