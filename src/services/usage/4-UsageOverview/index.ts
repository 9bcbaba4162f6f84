import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import { ApiKeys } from "../../identity/ApiKeys"
import { MemoryUsage } from "../3-UsageLedger/index"
import type { UsageOverviewShape } from "./contract"
import { makeMemoryOverview } from "./memory"
import { makePostgresOverview } from "./postgres"

export * from "./contract"

export class UsageOverview extends Context.Tag("UsageOverview")<UsageOverview, UsageOverviewShape>() {
  /** From the rollup tables the ledger's triggers keep (sql/0008, 0009). */
  static readonly layer = Layer.effect(UsageOverview, Effect.map(SqlClient.SqlClient, makePostgresOverview))

  /** From the state of UsageLedger.memory, with the names of API keys from ApiKeys. */
  static readonly memory = Layer.effect(
    UsageOverview,
    Effect.gen(function*() {
      const store = yield* MemoryUsage
      const keys = yield* ApiKeys
      return makeMemoryOverview(store, (workspaceId) =>
        keys.list(workspaceId).pipe(
          Effect.map((list) => new Map(list.map((key) => [key.id, key.name]))),
          Effect.catchTag("WorkspaceNotFound", () => Effect.succeed(new Map<string, string>()))
        ))
    })
  )
}
