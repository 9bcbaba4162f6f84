import { layer } from "@effect/vitest"
import { expect } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Redacted, Schedule } from "effect"
import { hashApiKey } from "../../src/domain/apiKey"
import { ApiKeys } from "../../src/services/identity/ApiKeys"
import { runMigrations } from "../../src/platform/Migrations"
import { validKeysRefresh } from "../../src/services/identity/validKeyHashes"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { freshDatabaseUrl } from "../support/database"
import { databaseTimeout } from "../support/migratedDatabase"

/**
 * Two instances over one database (two pools, two key stores): what one creates or revokes, or what is
 * written by anyone else (the CLI, a SQL session), the other learns within a refresh, without a lookup.
 */
const url = Effect.runSync(Effect.cached(Effect.promise(freshDatabaseUrl)))
const pool = Layer.unwrapEffect(Effect.map(url, (u) => PgClient.layer({ url: Redacted.make(u), maxConnections: 2 })))
/** One instance's key store over its own pool. */
const instance = () => ApiKeys.layer.pipe(Layer.provideMerge(Workspaces.layer), Layer.provideMerge(Layer.fresh(pool)))

class Other extends Effect.Tag("Other")<Other, ApiKeys["Type"]>() {}
const OtherInstance = Layer.effect(Other, ApiKeys).pipe(Layer.provide(instance()))

/** Waits (three refreshes at most) until the instance's view of the hash is the expected one. */
const learns = (keys: ApiKeys["Type"], hex: string, valid: boolean) =>
  Effect.suspend(() => (keys.isKnownValid(hex) === valid ? Effect.void : Effect.fail("not yet" as const))).pipe(
    Effect.retry({ schedule: Schedule.spaced("50 millis"), times: (3 * Duration.toMillis(validKeysRefresh)) / 50 })
  )

const migrated = Layer.effectDiscard(runMigrations()).pipe(Layer.provide(Layer.fresh(pool)))

layer(
  Layer.mergeAll(instance(), OtherInstance).pipe(Layer.provide(migrated)),
  { excludeTestServices: true, timeout: databaseTimeout }
)("the valid key hashes of two instances", (it) => {
  it.effect("a key created or revoked on one instance is known to the other within a refresh", () =>
    Effect.gen(function*() {
      const here = yield* ApiKeys
      const there = yield* Other
      const workspace = yield* Effect.flatMap(Workspaces, (w) => w.create("Two instances", {}))
      const { key, record } = yield* here.create(workspace.id, "k", ["COMPLETION_API"])
      const hex = hashApiKey(key).toString("hex")
      expect(here.isKnownValid(hex)).toBe(true)
      yield* learns(there, hex, true)
      yield* there.revoke(workspace.id, record.id)
      expect(there.isKnownValid(hex)).toBe(false)
      yield* learns(here, hex, false)
    }))

  it.effect("a key written by anyone else (the CLI, a SQL session) is learnt too", () =>
    Effect.gen(function*() {
      const here = yield* ApiKeys
      const sql = yield* SqlClient.SqlClient
      const workspace = yield* Effect.flatMap(Workspaces, (w) => w.create("Elsewhere", {}))
      const hash = hashApiKey("wsk_written-by-someone-else")
      yield* sql`INSERT INTO api_keys (workspace_id, name, display_prefix, key_hash, scopes)
                 VALUES (${workspace.id}, 'sql', 'wsk_…', ${hash}, ARRAY['COMPLETION_API'])`
      yield* learns(here, hash.toString("hex"), true)
      yield* sql`UPDATE api_keys SET revoked_at = now() WHERE key_hash = ${hash}`
      yield* learns(here, hash.toString("hex"), false)
    }))
})
