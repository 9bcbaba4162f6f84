import { Context, Layer } from "effect"
import { PeopleTables } from "../../people/peopleTables"
import type { PasswordsShape } from "./contract"
import { makeMemoryPasswords } from "./memory"
import { makePostgresPasswords } from "./postgres"

export * from "./contract"

/**
 * A person's password after their account exists: changed by its owner (the current password required),
 * or reset through the operator's one-time link. Nothing else sets a password: not an invitation, not a
 * workspace admin (an invitation only creates the password of an email that has no account).
 */
export class Passwords extends Context.Tag("Passwords")<Passwords, PasswordsShape>() {
  static readonly layer = Layer.effect(Passwords, makePostgresPasswords)

  /** For tests and the in-memory app: shares `PeopleTables` with `Members.memory` and `Sessions.memory` when built into one app. */
  static readonly memory = Layer.effect(Passwords, makeMemoryPasswords).pipe(Layer.provide(PeopleTables.memory))
}
