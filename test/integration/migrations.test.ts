import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { migrationIds, runMigrations } from "../../src/platform/Migrations"
import { emptyDatabaseUrl } from "../support/database"

describe("migrations", () => {
  it("apply once when several instances start together", async () => {
    const url = await emptyDatabaseUrl()
    // Three separate pools, as three instances would have.
    const instance = Effect.scoped(
      runMigrations().pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 })))
    )
    const results = await Effect.runPromise(Effect.all([instance, instance, instance], { concurrency: "unbounded" }))
    const applied = results.flat().map(([id]) => id)
    expect(applied.sort((a, b) => a - b)).toEqual(migrationIds())

    const rows = await Effect.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ migration_id: number }>`SELECT migration_id FROM effect_sql_migrations ORDER BY 1`).pipe(
        Effect.provide(PgClient.layer({ url: Redacted.make(url) })),
        Effect.scoped
      )
    )
    expect(rows.map((r) => r.migration_id)).toEqual(migrationIds())
  })
})
