import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { runMigrations } from "../../src/services/Migrations"
import { ProviderKeys } from "../../src/services/ProviderKeys"
import { Workspaces } from "../../src/services/Workspaces"
import { providerKeysContract } from "../contracts/providerKeys"
import { freshDatabaseUrl } from "../support/database"

/** A migrated database of its own for each case. */
const database = Layer.unwrapEffect(
  Effect.map(Effect.promise(freshDatabaseUrl), (url) =>
    Layer.effectDiscard(runMigrations()).pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 }))))
)

providerKeysContract("PostgreSQL", Layer.merge(ProviderKeys.layer, Workspaces.layer).pipe(Layer.provide(database)))
