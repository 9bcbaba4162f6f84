import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option } from "effect"
import * as path from "node:path"
import { AppConfig } from "../config"
import { startEmbeddedPostgres } from "./EmbeddedPostgres"
import { LocalSecrets } from "./LocalSecrets"
import { runMigrations } from "./Migrations"

/**
 * The one database: DATABASE_URL when set, otherwise an embedded PostgreSQL in DATA_DIR/postgres
 * that lives as long as this layer. Migrations are applied before the layer is ready.
 */
export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const url = Option.isSome(config.databaseUrl)
      ? config.databaseUrl.value
      : yield* Effect.flatMap(LocalSecrets, (secrets) => secrets.postgresPassword).pipe(
        Effect.flatMap((password) => startEmbeddedPostgres({ directory: path.join(config.dataDir, "postgres"), password })),
        Effect.tap(({ port }) => Effect.logInfo("embedded PostgreSQL started").pipe(Effect.annotateLogs({ port }))),
        Effect.map(({ url }) => url)
      )
    return Layer.effectDiscard(runMigrations()).pipe(
      Layer.provideMerge(PgClient.layer({ url, maxConnections: 20, applicationName: "workspace-api" }))
    )
  })
)
