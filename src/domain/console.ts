import { Schema } from "effect"

export const MemberRole = Schema.Literal("admin", "member")
export type MemberRole = typeof MemberRole.Type

/** Who is signed in to the console: the operator (ADMIN_TOKEN), or a person. */
export type ConsoleActor =
  | { readonly kind: "operator"; readonly sessionHash: Buffer }
  | {
    readonly kind: "person"
    readonly sessionHash: Buffer
    readonly personId: string
    readonly email: string
    readonly name: string | null
  }

/** How the audit log names an actor: never a secret, only who it was. */
export const actorLabel = (actor: ConsoleActor): string => (actor.kind === "operator" ? "operator" : actor.email)

/** Emails are compared lower-cased and trimmed: one person per address. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

export const Email = Schema.String.pipe(
  Schema.maxLength(320),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "must be an email address" })
)

/** Whether an IANA time zone name is known (Intl knows the tz database). */
export const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone })
    return !/^[+-]/.test(zone)
  } catch {
    return false
  }
}
