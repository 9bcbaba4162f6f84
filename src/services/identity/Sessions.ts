import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer, Option, Ref } from "effect"
import type { ConsoleActor } from "../../domain/console"
import { generateToken, hashToken, isWellFormedToken } from "../../domain/password"
import { orStorageFailure } from "../../platform/orStorageFailure"
import { currentDate, PeopleTables, type PeopleState } from "../people/peopleTables"
import type { StorageFailure } from "../../platform/StorageFailure"

/** A session ends after this long without a call… */
export const sessionIdleTimeout = Duration.hours(12)
/** …and this long after sign-in, whatever its use. */
export const sessionLifetime = Duration.days(7)
/** last_seen_at is written at most this often per session: no write on every call. */
const touchEvery = Duration.minutes(1)

/**
 * Who a session is: the operator only when it was opened as the operator's; a person's session whose
 * person cannot be read is nobody's (never the operator's: a missing row must not grant everything).
 */
const actorOf = (
  operator: boolean,
  sessionHash: Buffer,
  person: { readonly id: string; readonly email: string; readonly name: string | null } | undefined
): Option.Option<ConsoleActor> =>
  operator
    ? Option.some({ kind: "operator", sessionHash })
    : person === undefined
    ? Option.none()
    : Option.some({ kind: "person", sessionHash, personId: person.id, email: person.email, name: person.name })

/**
 * Console sessions in PostgreSQL, looked up on every call: a sign-out or a removal is seen by
 * every instance at once. The cookie carries a 256-bit random id; only its SHA-256 hash is stored.
 */
export class Sessions extends Context.Tag("Sessions")<Sessions, {
  /** Opens a session; the id is for the cookie only. */
  readonly open: (who: { readonly personId: string } | "operator") => Effect.Effect<{ readonly id: string; readonly expiresAt: Date }, StorageFailure>
  /** The signed-in actor of a cookie, or None when unknown, idle too long or past its lifetime. */
  readonly resolve: (id: string) => Effect.Effect<Option.Option<ConsoleActor>, StorageFailure>
  readonly close: (sessionHash: Buffer) => Effect.Effect<void, StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    Sessions,
    Effect.map(SqlClient.SqlClient, (sql) => ({
      open: (who) =>
        Effect.gen(function*() {
          const id = generateToken()
          const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
          const expiresAt = new Date(now + Duration.toMillis(sessionLifetime))
          yield* orStorageFailure(
            who === "operator"
              ? sql`INSERT INTO console_sessions (id_hash, operator, expires_at) VALUES (${hashToken(id)}, true, ${expiresAt})`
              : sql`INSERT INTO console_sessions (id_hash, person_id, expires_at)
                    VALUES (${hashToken(id)}, ${who.personId}, ${expiresAt})`
          )
          // Expired sessions are swept now and then by sign-ins rather than by a timer of every instance.
          yield* orStorageFailure(sql`DELETE FROM console_sessions WHERE expires_at < now()
                                        OR last_seen_at < now() - ${`${Duration.toSeconds(sessionIdleTimeout)} seconds`}::interval`)
          return { id, expiresAt }
        }),
      resolve: (id) =>
        Effect.gen(function*() {
          if (!isWellFormedToken(id)) return Option.none()
          const sessionHash = hashToken(id)
          const idle = `${Duration.toSeconds(sessionIdleTimeout)} seconds`
          const rows = yield* orStorageFailure(sql<{
            operator: boolean
            person_id: string | null
            email: string | null
            name: string | null
            stale: boolean
          }>`
            SELECT s.operator, s.person_id, p.email, p.name,
                   s.last_seen_at < now() - ${`${Duration.toSeconds(touchEvery)} seconds`}::interval AS stale
            FROM console_sessions s LEFT JOIN people p ON p.id = s.person_id
            WHERE s.id_hash = ${sessionHash} AND s.expires_at > now() AND s.last_seen_at > now() - ${idle}::interval`)
          const row = rows[0]
          if (!row) return Option.none()
          if (row.stale) yield* orStorageFailure(sql`UPDATE console_sessions SET last_seen_at = now() WHERE id_hash = ${sessionHash}`)
          return actorOf(row.operator, sessionHash, row.person_id === null || row.email === null
            ? undefined
            : { id: row.person_id, email: row.email, name: row.name })
        }),
      close: (sessionHash) => orStorageFailure(sql`DELETE FROM console_sessions WHERE id_hash = ${sessionHash}`).pipe(Effect.asVoid)
    }))
  )

  /** For tests and the in-memory app: the same rules over `PeopleTables` (shared with `Members.memory`). */
  static readonly memory = Layer.effect(
    Sessions,
    Effect.map(PeopleTables, (tables) => {
      const isLive = (session: { readonly expiresAt: Date; readonly lastSeenAt: Date }, now: Date) =>
        session.expiresAt.getTime() > now.getTime() && session.lastSeenAt.getTime() > now.getTime() - Duration.toMillis(sessionIdleTimeout)
      return Sessions.of({
        open: (who) =>
          Effect.gen(function*() {
            const id = generateToken()
            const now = yield* currentDate
            const expiresAt = new Date(now.getTime() + Duration.toMillis(sessionLifetime))
            yield* Ref.update(tables, (state): PeopleState => {
              // Expired sessions are swept by sign-ins, as in PostgreSQL.
              const sessions = new Map([...state.sessions].filter(([, session]) => isLive(session, now)))
              sessions.set(hashToken(id).toString("hex"), {
                personId: who === "operator" ? null : who.personId,
                operator: who === "operator",
                expiresAt,
                lastSeenAt: now
              })
              return { ...state, sessions }
            })
            return { id, expiresAt }
          }),
        resolve: (id) =>
          Effect.gen(function*() {
            if (!isWellFormedToken(id)) return Option.none()
            const sessionHash = hashToken(id)
            const key = sessionHash.toString("hex")
            const now = yield* currentDate
            return yield* Ref.modify(tables, (state): [Option.Option<ConsoleActor>, PeopleState] => {
              const session = state.sessions.get(key)
              if (session === undefined || !isLive(session, now)) return [Option.none(), state]
              const stale = session.lastSeenAt.getTime() < now.getTime() - Duration.toMillis(touchEvery)
              const next = stale ? { ...state, sessions: new Map(state.sessions).set(key, { ...session, lastSeenAt: now }) } : state
              const person = session.personId === null ? undefined : state.people.get(session.personId)
              return [actorOf(session.operator, sessionHash, person), next]
            })
          }),
        close: (sessionHash) =>
          Ref.update(tables, (state) => {
            const sessions = new Map(state.sessions)
            sessions.delete(sessionHash.toString("hex"))
            return { ...state, sessions }
          })
      })
    })
  ).pipe(Layer.provide(PeopleTables.memory))
}
