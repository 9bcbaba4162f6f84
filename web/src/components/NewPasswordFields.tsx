import { minimumPasswordLength, newPasswordProblem } from "../../../src/domain/passwordRule"
import { Field } from "./Field"

/** What is wrong with a chosen password and its repetition, by the server's own rule; nothing when it can be sent. */
export const choiceProblems = (password: string, repeated: string): { readonly password?: string; readonly repeated?: string } => {
  const problem = newPasswordProblem(password, "The password")
  if (problem !== undefined) return { password: `${problem}.` }
  return repeated === password ? {} : { repeated: "The passwords differ." }
}

/** A new password and its repetition, labelled, with the rule as a hint and the problems once the form was tried. */
export const NewPasswordFields = (props: {
  readonly label: string
  readonly repeatLabel: string
  readonly password: string
  readonly repeated: string
  readonly onPassword: (value: string) => void
  readonly onRepeated: (value: string) => void
  /** Show the problems: the form was submitted once. */
  readonly tried: boolean
  /** What the server said of the field, if it refused it. */
  readonly serverError?: string | undefined
}) => {
  const problems = choiceProblems(props.password, props.repeated)
  return (
    <>
      <Field
        label={props.label}
        type="password"
        value={props.password}
        onInput={props.onPassword}
        required
        minLength={minimumPasswordLength}
        autoComplete="new-password"
        hint={`At least ${minimumPasswordLength} characters, not only spaces.`}
        error={props.tried ? problems.password ?? props.serverError : undefined}
      />
      <Field
        label={props.repeatLabel}
        type="password"
        value={props.repeated}
        onInput={props.onRepeated}
        required
        autoComplete="new-password"
        error={props.tried ? problems.repeated : undefined}
      />
    </>
  )
}
