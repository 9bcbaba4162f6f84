import { Effect, Layer } from "effect"
import { ApiKeys } from "../../../src/services/identity/ApiKeys"
import { UsageLedger } from "../../../src/services/usage/3-UsageLedger/index"
import { UsageOverview } from "../../../src/services/usage/4-UsageOverview/index"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import { LedgerFixtures, usageLedgerContract } from "../../contracts/usageLedger"

/** Workspaces and named keys from their in-memory services (the overview reads key names from ApiKeys). */
const MemoryFixtures = Layer.effect(
  LedgerFixtures,
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const keys = yield* ApiKeys
    return {
      // Suspended: create picks the id when called, not when run.
      newWorkspace: Effect.map(Effect.orDie(Effect.suspend(() => workspaces.create("contract", {}))), (workspace) => workspace.id),
      newKey: (workspaceId: string, name: string) =>
        Effect.map(Effect.orDie(keys.create(workspaceId, name, ["USAGE_EXPORT_API"])), ({ record }) => record.id)
    }
  })
)

usageLedgerContract(
  "memory",
  Layer.mergeAll(UsageOverview.memory, MemoryFixtures).pipe(
    Layer.provideMerge(UsageLedger.memory),
    Layer.provideMerge(ApiKeys.memory),
    Layer.provideMerge(Workspaces.memory)
  )
)
