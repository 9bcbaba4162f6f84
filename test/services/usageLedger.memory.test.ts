import { Effect, Layer } from "effect"
import * as crypto from "node:crypto"
import { UsageLedger } from "../../src/services/UsageLedger/index"
import { LedgerFixtures, usageLedgerContract } from "../contracts/usageLedger"

/** The in-memory ledger knows no workspaces or keys: any id will do. */
const MemoryFixtures = Layer.succeed(LedgerFixtures, {
  newWorkspace: Effect.sync(() => crypto.randomUUID()),
  newKey: () => Effect.sync(() => crypto.randomUUID())
})

usageLedgerContract("memory", Layer.merge(UsageLedger.memory, MemoryFixtures))
