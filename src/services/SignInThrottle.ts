import { SqlClient } from "@effect/sql"
import { Context, Data, Duration, Effect, Layer, Ref } from "effect"
import { normalizeEmail } from "../domain/console"
import { orStorageFailure } from "./orStorageFailure"
import type { StorageFailure } from "./StorageFailure"

/** Failures allowed per email and per client address within the window; the next attempt is refused. */
export const signInFailuresAllowed = 5
export const signInWindow = Duration.minutes(15)

export class SignInThrottled extends Data.TaggedError("SignInThrottled")<{ readonly retryAfterSeconds: number }> {}

/**
 * Throttles failed sign-ins per email and per client address, counted in PostgreSQL so that every
 * instance sees the same count. A success clears the email's failures (not the address's).
 */
export class SignInThrottle extends Context.Tag("SignInThrottle")<SignInThrottle, {
  readonly check: (email: string, address: string) => Effect.Effect<void, SignInThrottled | StorageFailure>
  readonly failed: (email: string, address: string) => Effect.Effect<void, StorageFailure>
  readonly succeeded: (email: string) => Effect.Effect<void, StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    SignInThrottle,
    Effect.map(SqlClient.SqlClient, (sql) => {
      const window = `${Duration.toSeconds(signInWindow)} seconds`
      const subjects = (email: string, address: string) => [`email:${normalizeEmail(email)}`, `address:${address}`]
      return {
        check: (email, address) =>
          Effect.gen(function*() {
            const rows = yield* orStorageFailure(sql<{ subject: string; failures: number; oldest: Date }>`
              SELECT subject, count(*)::int AS failures, min(failed_at) AS oldest FROM (
                SELECT subject, failed_at, row_number() OVER (PARTITION BY subject ORDER BY failed_at DESC) AS n
                FROM sign_in_failures
                WHERE subject IN ${sql.in(subjects(email, address))} AND failed_at > now() - ${window}::interval
              ) recent WHERE n <= ${signInFailuresAllowed} GROUP BY subject`)
            const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
            // The attempt is allowed again when the oldest of the last five failures leaves the window.
            const waits = rows
              .filter((row) => row.failures >= signInFailuresAllowed)
              .map((row) => row.oldest.getTime() + Duration.toMillis(signInWindow) - now)
            if (waits.length > 0) {
              return yield* Effect.fail(new SignInThrottled({ retryAfterSeconds: Math.max(1, Math.ceil(Math.max(...waits) / 1000)) }))
            }
          }),
        failed: (email, address) =>
          orStorageFailure(Effect.zipRight(
            sql`INSERT INTO sign_in_failures (subject)
                SELECT jsonb_array_elements_text(${JSON.stringify(subjects(email, address))}::jsonb)`,
            sql`DELETE FROM sign_in_failures WHERE failed_at < now() - ${window}::interval`
          )).pipe(Effect.asVoid),
        succeeded: (email) =>
          orStorageFailure(sql`DELETE FROM sign_in_failures WHERE subject = ${`email:${normalizeEmail(email)}`}`).pipe(Effect.asVoid)
      }
    })
  )

  /** For tests and the in-memory app: the failures in a Ref, counted by the same rule. */
  static readonly memory = Layer.effect(
    SignInThrottle,
    Effect.map(Ref.make<ReadonlyArray<{ readonly subject: string; readonly at: number }>>([]), (failures) => {
      const windowMs = Duration.toMillis(signInWindow)
      const now = Effect.clockWith((clock) => clock.currentTimeMillis)
      return SignInThrottle.of({
        check: (email, address) =>
          Effect.gen(function*() {
            const at = yield* now
            const recent = (yield* Ref.get(failures)).filter((failure) => failure.at > at - windowMs)
            const waits = subjectsOf(email, address).flatMap((subject) => {
              const lastFew = recent.filter((failure) => failure.subject === subject).map((failure) => failure.at)
                .sort((a, b) => b - a).slice(0, signInFailuresAllowed)
              return lastFew.length >= signInFailuresAllowed ? [Math.min(...lastFew) + windowMs - at] : []
            })
            if (waits.length > 0) {
              return yield* Effect.fail(new SignInThrottled({ retryAfterSeconds: Math.max(1, Math.ceil(Math.max(...waits) / 1000)) }))
            }
          }),
        failed: (email, address) =>
          Effect.flatMap(now, (at) =>
            Ref.update(failures, (existing) => [
              ...existing.filter((failure) => failure.at >= at - windowMs),
              ...subjectsOf(email, address).map((subject) => ({ subject, at }))
            ])),
        succeeded: (email) => Ref.update(failures, (existing) => existing.filter((failure) => failure.subject !== `email:${normalizeEmail(email)}`))
      })
    })
  )
}

const subjectsOf = (email: string, address: string) => [`email:${normalizeEmail(email)}`, `address:${address}`]
