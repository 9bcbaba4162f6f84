import { SqlClient } from "@effect/sql"
import { Context, Data, Duration, Effect, Layer, Ref } from "effect"
import * as crypto from "node:crypto"
import { normalizeEmail } from "../../domain/console"
import { orStorageFailure } from "../../platform/orStorageFailure"
import type { StorageFailure } from "../../platform/StorageFailure"

/** Failures allowed per email and client address together, and per client address, within the window; the next attempt is refused. */
export const signInFailuresAllowed = 5
export const signInWindow = Duration.minutes(15)

export class SignInThrottled extends Data.TaggedError("SignInThrottled")<{ readonly retryAfterSeconds: number }> {}

/** Who tries to sign in, from which client address: a person by email, or the operator (ADMIN_TOKEN). */
export type SignInAttempt =
  | { readonly email: string; readonly address: string }
  | { readonly operator: true; readonly address: string }

/** An attempt counted as a failure until `succeeded` gives it back. */
export interface SignInReservation {
  readonly id: string
  readonly subjects: ReadonlyArray<string>
}

/**
 * What an attempt is counted against: the email and address together, and the address. Never the email
 * alone, so that nobody can lock a person out from elsewhere; the operator by address only.
 */
export const subjectsOf = (attempt: SignInAttempt): ReadonlyArray<string> =>
  "operator" in attempt
    ? [`address:${attempt.address}`]
    : [`pair:${normalizeEmail(attempt.email)}|${attempt.address}`, `address:${attempt.address}`]

const pairOf = (reservation: SignInReservation): string | undefined => reservation.subjects.find((subject) => subject.startsWith("pair:"))

const retryAfter = (waitMs: number) => new SignInThrottled({ retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) })

/**
 * Throttles failed sign-ins per email and client address together, and per client address. Each attempt
 * is counted as a failure BEFORE its password is checked (`reserve`, atomic: concurrent attempts cannot
 * pass the limit together), and given back when the password was right (`succeeded`, which also clears
 * that email's failures from that address). An attempt is refused while one of its subjects has five
 * failures within the window, until the oldest of those five leaves it.
 */
export class SignInThrottle extends Context.Tag("SignInThrottle")<SignInThrottle, {
  readonly reserve: (attempt: SignInAttempt) => Effect.Effect<SignInReservation, SignInThrottled | StorageFailure>
  readonly succeeded: (reservation: SignInReservation) => Effect.Effect<void, StorageFailure>
}>() {
  /**
   * Counted in PostgreSQL, so every instance sees the same counts: the attempt's subjects are locked (an
   * advisory lock each, in one order), counted and, when under the limit, written, in one transaction.
   */
  static readonly layer = Layer.effect(
    SignInThrottle,
    Effect.map(SqlClient.SqlClient, (sql) => {
      const window = `${Duration.toSeconds(signInWindow)} seconds`
      // The advisory locks' first key: this throttle's own space (the migrations lock with a single bigint).
      const lockSpace = 727_274_002
      return {
        reserve: (attempt) =>
          orStorageFailure(Effect.gen(function*() {
            const subjects = subjectsOf(attempt)
            const id = crypto.randomUUID()
            const waitMs = yield* sql.withTransaction(Effect.gen(function*() {
              for (const subject of [...subjects].sort()) {
                yield* sql`SELECT pg_advisory_xact_lock(${lockSpace}, hashtext(${subject}))`
              }
              // Per subject: its five latest failures in the window, and when the oldest of them leaves it.
              const spent = yield* sql<{ wait_ms: number }>`
                SELECT ceil(extract(epoch FROM min(failed_at) + ${window}::interval - now()) * 1000)::int AS wait_ms FROM (
                  SELECT subject, failed_at, row_number() OVER (PARTITION BY subject ORDER BY failed_at DESC) AS n
                  FROM sign_in_failures
                  WHERE subject IN ${sql.in(subjects)} AND failed_at > now() - ${window}::interval
                ) recent WHERE n <= ${signInFailuresAllowed} GROUP BY subject HAVING count(*) >= ${signInFailuresAllowed}`
              if (spent.length > 0) return Math.max(...spent.map((row) => row.wait_ms))
              yield* sql`INSERT INTO sign_in_failures (subject, attempt)
                         SELECT subject, ${id}::uuid FROM jsonb_array_elements_text(${JSON.stringify(subjects)}::jsonb) AS s(subject)`
              return 0
            }))
            if (waitMs > 0) return yield* Effect.fail(retryAfter(waitMs))
            yield* sql`DELETE FROM sign_in_failures WHERE failed_at < now() - ${window}::interval`
            return { id, subjects }
          })),
        succeeded: (reservation) => {
          const pair = pairOf(reservation)
          return orStorageFailure(
            pair === undefined
              ? sql`DELETE FROM sign_in_failures WHERE attempt = ${reservation.id}::uuid`
              : sql`DELETE FROM sign_in_failures WHERE attempt = ${reservation.id}::uuid OR subject = ${pair}`
          ).pipe(Effect.asVoid)
        }
      }
    })
  )

  /** For tests and the in-memory app: the failures in a Ref, counted by the same rule (Ref.modify is atomic). */
  static readonly memory = Layer.effect(
    SignInThrottle,
    Effect.map(
      Ref.make<ReadonlyArray<{ readonly subject: string; readonly at: number; readonly attempt: string }>>([]),
      (failures) => {
        const windowMs = Duration.toMillis(signInWindow)
        return SignInThrottle.of({
          reserve: (attempt) =>
            Effect.clockWith((clock) => {
              const at = clock.unsafeCurrentTimeMillis()
              const subjects = subjectsOf(attempt)
              const id = crypto.randomUUID()
              return Ref.modify(failures, (existing) => {
                const recent = existing.filter((failure) => failure.at > at - windowMs)
                const waits = subjects.flatMap((subject) => {
                  const lastFew = recent.filter((failure) => failure.subject === subject).map((failure) => failure.at)
                    .sort((a, b) => b - a).slice(0, signInFailuresAllowed)
                  return lastFew.length >= signInFailuresAllowed ? [Math.min(...lastFew) + windowMs - at] : []
                })
                return waits.length > 0
                  ? [Math.max(...waits), recent]
                  : [0, [...recent, ...subjects.map((subject) => ({ subject, at, attempt: id }))]]
              }).pipe(Effect.flatMap((waitMs) => (waitMs > 0 ? Effect.fail(retryAfter(waitMs)) : Effect.succeed({ id, subjects }))))
            }),
          succeeded: (reservation) => {
            const pair = pairOf(reservation)
            return Ref.update(failures, (existing) =>
              existing.filter((failure) => failure.attempt !== reservation.id && failure.subject !== pair))
          }
        })
      }
    )
  )
}
