import { SqlClient } from "@effect/sql"
import { Context, Data, Effect, Layer } from "effect"
import { DatabaseHealth } from "./Database"
import { latestMigrationId } from "./Migrations"

/** Why the service cannot take requests now, in words for the operator. */
export class Unready extends Data.TaggedError("Unready")<{ readonly reason: string }> {}

/**
 * Liveness and readiness of the service: what the health endpoints report. Liveness is whether the
 * database the service owns is running; readiness is whether the database answers and is migrated.
 */
export class Readiness extends Context.Tag("Readiness")<Readiness, {
  /** Fails when the process should be restarted (its own database died). */
  readonly alive: Effect.Effect<void, Unready>
  /** The migration the database is at, when the service can take requests. */
  readonly ready: Effect.Effect<number, Unready>
  /** The database `ready` asks, named among /readyz's dependencies; none for stores kept in memory. */
  readonly database?: "postgresql"
}>() {
  static readonly layer = Layer.effect(
    Readiness,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const database = yield* DatabaseHealth
      const expected = latestMigrationId()
      return {
        database: "postgresql",
        alive: Effect.flatMap(database.alive, (alive) =>
          alive ? Effect.void : Effect.fail(new Unready({ reason: "the embedded PostgreSQL this service owns is not running" }))),
        ready: sql<{ latest: number | null }>`SELECT max(migration_id) AS latest FROM effect_sql_migrations`.pipe(
          Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => new Unready({ reason: "database did not answer in time" }) }),
          Effect.mapError((e) => (e instanceof Unready ? e : new Unready({ reason: "database unreachable" }))),
          Effect.flatMap(([row]) => {
            const latest = row?.latest ?? 0
            return latest >= expected
              ? Effect.succeed(latest)
              : Effect.fail(new Unready({ reason: `database at migration ${latest}, expected ${expected}` }))
          })
        )
      }
    })
  )

  /** No database: always alive, and ready at the latest migration (what a migrated database reports). */
  static readonly memory = Layer.sync(Readiness, () => {
    const latest = latestMigrationId()
    return { alive: Effect.void, ready: Effect.succeed(latest) }
  })
}
