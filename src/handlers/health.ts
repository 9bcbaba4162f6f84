import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { WorkspaceApi } from "../api/Api"
import { NotReady } from "../api/healthApi"
import { DatabaseHealth } from "../services/Database"
import { latestMigrationId } from "../services/Migrations"

export const HealthHandlers = HttpApiBuilder.group(WorkspaceApi, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const database = yield* DatabaseHealth
    const expected = latestMigrationId()
    const notReady = (reason: string) => new NotReady({ status: "unavailable", reason })
    return handlers
      // A process whose own database died is not alive, even in the moment before it exits.
      .handle("healthz", () =>
        Effect.flatMap(database.alive, (alive) =>
          alive ? Effect.succeed({ status: "ok" as const }) : Effect.fail(notReady("the embedded PostgreSQL this service owns is not running"))))
      .handle("readyz", () =>
        sql<{ latest: number | null }>`SELECT max(migration_id) AS latest FROM effect_sql_migrations`.pipe(
          Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => notReady("database did not answer in time") }),
          Effect.mapError((e) => (e instanceof NotReady ? e : notReady("database unreachable"))),
          Effect.flatMap(([row]) =>
            (row?.latest ?? 0) >= expected
              ? Effect.succeed({ status: "ready" as const, migration: row?.latest ?? 0 })
              : Effect.fail(notReady(`database at migration ${row?.latest ?? 0}, expected ${expected}`))
          )
        ))
  }))
