import { Data, Duration, type Effect } from "effect"
import type { Person } from "../../people/Members/contract"
import type { StorageFailure } from "../../../platform/StorageFailure"

/** How long an operator's password-reset link stays valid. */
export const passwordResetLifetime = Duration.hours(1)

/** A reset link just issued: its token is given out once, only its hash is kept. */
export interface PasswordResetLink {
  readonly token: string
  readonly expiresAt: Date
  readonly person: Person
}

/** What a reset link's page shows its holder: whose password it sets, until when. */
export interface PasswordResetInfo {
  readonly email: string
  readonly expiresAt: Date
}

/** No account has this email (nobody, or a person who never accepted an invitation). */
export class NoAccount extends Data.TaggedError("NoAccount")<{ readonly email: string }> {}
/** The reset link does not exist, was used, or expired. */
export class ResetLinkGone extends Data.TaggedError("ResetLinkGone")<{ readonly reason: "unknown" | "used" | "expired" }> {}
/** The current password given is not the person's. Nothing changed. */
export class WrongPassword extends Data.TaggedError("WrongPassword")<{}> {}

/** What every backing of Passwords provides (the Passwords Tag's shape). */
export interface PasswordsShape {
  /**
   * The person's own change: the current password must match (checked against the stored hash in the
   * same write, so a concurrent change cannot be overwritten unseen). Every other session of theirs ends;
   * `keepSession` (the hash of the session asking) stays.
   */
  readonly change: (
    personId: string,
    currentPassword: string,
    newPassword: string,
    keepSession: Buffer
  ) => Effect.Effect<void, WrongPassword | StorageFailure>
  /** The operator's one-time reset link for the account of an email; the person's outstanding links stop working. */
  readonly issueReset: (email: string) => Effect.Effect<PasswordResetLink, NoAccount | StorageFailure>
  readonly resetLink: (token: string) => Effect.Effect<PasswordResetInfo, ResetLinkGone | StorageFailure>
  /** Sets the password, uses up the link and ends every session of the person, in one step. */
  readonly useReset: (token: string, newPassword: string) => Effect.Effect<Person, ResetLinkGone | StorageFailure>
}
