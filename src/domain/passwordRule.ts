// The rule every new console password must meet (DESIGN.md: at least 12 characters, not only white space).
// No imports: the web console's forms apply the very same rule before asking the server.

/** At least this many characters… */
export const minimumPasswordLength = 12
/** …and at most this many UTF-16 units (what sign-in accepts): scrypt's input must not be the caller's to inflate. */
export const maximumPasswordLength = 1_000

/** Characters as a person counts them (code points after NFC), not UTF-16 units. */
const characterCount = (password: string): number => [...password.normalize("NFC")].length

/**
 * Why a new password is refused, naming the field ("password must have at least 12 characters"), or
 * undefined when it is acceptable. Twelve spaces are no password.
 */
export const newPasswordProblem = (password: string, field: string): string | undefined => {
  if (characterCount(password) < minimumPasswordLength) return `${field} must have at least ${minimumPasswordLength} characters`
  if (password.length > maximumPasswordLength) return `${field} must have at most ${maximumPasswordLength} characters`
  if (password.trim() === "") return `${field} must not be only white space`
  return undefined
}
