import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import type { UsageLedgerShape } from "./contract"
import { makeMemoryLedger } from "./memory"
import { makeMemoryUsageStore, type MemoryUsageStore } from "./memoryStore"
import { makePostgresLedger } from "./postgres"

export * from "./contract"
export type { MemoryUsageStore } from "./memoryStore"

/**
 * The state of `UsageLedger.memory`, for the in-memory readers of the same data (UsageOverview.memory)
 * and for tests that look at what was stored.
 */
export class MemoryUsage extends Context.Tag("MemoryUsage")<MemoryUsage, MemoryUsageStore>() {}

export class UsageLedger extends Context.Tag("UsageLedger")<UsageLedger, UsageLedgerShape>() {
  /** The ledger in PostgreSQL. */
  static readonly layer = Layer.effect(UsageLedger, Effect.map(SqlClient.SqlClient, makePostgresLedger))

  /** The ledger in this process's memory, with its state exposed as `MemoryUsage`. */
  static readonly memory: Layer.Layer<UsageLedger | MemoryUsage> = Layer.effectContext(
    Effect.sync(() => {
      const store = makeMemoryUsageStore()
      return Context.make(MemoryUsage, store).pipe(Context.add(UsageLedger, makeMemoryLedger(store)))
    })
  )
}
