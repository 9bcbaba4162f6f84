import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { normalizeEmail } from "../../../domain/console"
import { decoyHash, generateToken, hashPassword, hashToken, isWellFormedToken, verifyPassword } from "../../../domain/password"
import type { Person } from "../../people/Members/contract"
import { orStorageFailure } from "../../../platform/orStorageFailure"
import { NoAccount, type PasswordsShape, passwordResetLifetime, ResetLinkGone, WrongPassword } from "./contract"

/** Passwords over PostgreSQL: each change one transaction (or one conditional statement). */
export const makePostgresPasswords: Effect.Effect<PasswordsShape, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const liveReset = (token: string, lock: boolean) =>
    Effect.gen(function*() {
      if (!isWellFormedToken(token)) return yield* Effect.fail(new ResetLinkGone({ reason: "unknown" }))
      const [row] = yield* sql<{ id: string; person_id: string; email: string; expires_at: Date; used_at: Date | null }>`
        SELECT r.id, r.person_id, p.email, r.expires_at, r.used_at
        FROM password_resets r JOIN people p ON p.id = r.person_id
        WHERE r.token_hash = ${hashToken(token)} ${lock ? sql`FOR UPDATE OF r` : sql``}`
      if (row === undefined) return yield* Effect.fail(new ResetLinkGone({ reason: "unknown" }))
      if (row.used_at !== null) return yield* Effect.fail(new ResetLinkGone({ reason: "used" }))
      const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
      if (row.expires_at.getTime() <= now) return yield* Effect.fail(new ResetLinkGone({ reason: "expired" }))
      return row
    })

  return {
    change: (personId, currentPassword, newPassword, keepSession) =>
      Effect.gen(function*() {
        const [row] = yield* orStorageFailure(sql<{ password_hash: string | null }>`SELECT password_hash FROM people WHERE id = ${personId}`)
        const stored = row?.password_hash ?? null
        const matches = yield* verifyPassword(currentPassword, stored ?? decoyHash)
        if (!matches || stored === null) return yield* Effect.fail(new WrongPassword())
        // Hashed outside the transaction: no row lock is held while scrypt runs.
        const hash = yield* hashPassword(newPassword)
        return yield* orStorageFailure(sql.withTransaction(Effect.gen(function*() {
          // Written only if the password is still the one just checked: a concurrent change is not overwritten unseen.
          const changed = yield* sql`
            UPDATE people SET password_hash = ${hash}, updated_at = now()
            WHERE id = ${personId} AND password_hash = ${stored} RETURNING id`
          if (changed.length === 0) return yield* Effect.fail(new WrongPassword())
          yield* sql`DELETE FROM console_sessions WHERE person_id = ${personId} AND id_hash <> ${keepSession}`
        })))
      }),
    issueReset: (email) =>
      orStorageFailure(sql.withTransaction(Effect.gen(function*() {
        const [person] = yield* sql<Person>`
          SELECT id, email, name FROM people WHERE email = ${normalizeEmail(email)} AND password_hash IS NOT NULL FOR UPDATE`
        if (person === undefined) return yield* Effect.fail(new NoAccount({ email: normalizeEmail(email) }))
        // Only the newest link counts.
        yield* sql`UPDATE password_resets SET used_at = now() WHERE person_id = ${person.id} AND used_at IS NULL`
        const token = generateToken()
        const expiresAt = new Date((yield* Effect.clockWith((c) => c.currentTimeMillis)) + Duration.toMillis(passwordResetLifetime))
        yield* sql`INSERT INTO password_resets (token_hash, person_id, expires_at) VALUES (${hashToken(token)}, ${person.id}, ${expiresAt})`
        return { token, expiresAt, person: { id: person.id, email: person.email, name: person.name } }
      }))),
    resetLink: (token) =>
      orStorageFailure(liveReset(token, false)).pipe(Effect.map((row) => ({ email: row.email, expiresAt: row.expires_at }))),
    useReset: (token, newPassword) =>
      Effect.gen(function*() {
        const hash = yield* hashPassword(newPassword)
        return yield* orStorageFailure(sql.withTransaction(Effect.gen(function*() {
          const row = yield* liveReset(token, true)
          yield* sql`UPDATE password_resets SET used_at = now() WHERE id = ${row.id}`
          const [person] = yield* sql<Person>`
            UPDATE people SET password_hash = ${hash}, updated_at = now() WHERE id = ${row.person_id} RETURNING id, email, name`
          // A reset is for a password someone else may know: every session opened with it ends.
          yield* sql`DELETE FROM console_sessions WHERE person_id = ${row.person_id}`
          return { id: person!.id, email: person!.email, name: person!.name }
        })))
      })
  }
})
