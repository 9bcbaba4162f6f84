import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { runMigrations } from "../../src/platform/Migrations"
import { freshDatabaseUrl } from "./database"

/**
 * A fresh, migrated database on the tests' shared PostgreSQL server, as the SqlClient of the stores'
 * `.layer`s (contract tests of the real backings). Needs the integration set's globalSetup.
 */
export const MigratedDatabase = Layer.unwrapEffect(
  Effect.map(Effect.promise(freshDatabaseUrl), (url) =>
    Layer.effectDiscard(runMigrations()).pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(url), maxConnections: 4 }))))
)

/** Long enough for a fresh database and its migrations on a busy machine. */
export const databaseTimeout = "60 seconds"
