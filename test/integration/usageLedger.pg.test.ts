import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import * as crypto from "node:crypto"
import { runMigrations } from "../../src/platform/Migrations"
import { UsageLedger } from "../../src/services/usage/3-UsageLedger/index"
import { UsageOverview } from "../../src/services/usage/4-UsageOverview/index"
import { LedgerFixtures, usageLedgerContract } from "../contracts/usageLedger"
import { freshDatabaseUrl } from "../support/database"

/** A fresh database of the shared test server, migrated. */
const Database = Layer.effectDiscard(runMigrations()).pipe(
  Layer.provideMerge(
    Layer.unwrapEffect(
      Effect.map(Effect.promise(freshDatabaseUrl), (url) => PgClient.layer({ url: Redacted.make(url), maxConnections: 4 }))
    )
  )
)

/** Workspaces and API keys are rows the ledger's foreign keys point at. */
const PgFixtures = Layer.effect(
  LedgerFixtures,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    newWorkspace: Effect.orDie(
      Effect.map(sql<{ id: string }>`INSERT INTO workspaces (name) VALUES ('contract') RETURNING id`, (rows) => rows[0]!.id)
    ),
    newKey: (workspaceId: string, name: string) =>
      Effect.orDie(
        Effect.map(
          sql<{ id: string }>`INSERT INTO api_keys (workspace_id, name, display_prefix, key_hash, scopes)
            VALUES (${workspaceId}, ${name}, 'wsk_test', ${crypto.randomBytes(32)}, ${"{USAGE_EXPORT_API}"}) RETURNING id`,
          (rows) => rows[0]!.id
        )
      )
  }))
)

usageLedgerContract("PostgreSQL", Layer.mergeAll(UsageLedger.layer, UsageOverview.layer, PgFixtures).pipe(Layer.provide(Database)))
