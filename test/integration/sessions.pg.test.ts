import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { Sessions } from "../../src/services/identity/Sessions"
import { Members } from "../../src/services/people/Members"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { sessionsContract } from "../contracts/sessions"
import { databaseTimeout, MigratedDatabase } from "../support/migratedDatabase"

// The contract of test/contracts/sessions.ts on PostgreSQL; test/services/identity/sessions.memory.test.ts runs it on the in-memory backing.
layer(Layer.mergeAll(Sessions.layer, Members.layer).pipe(Layer.provideMerge(Workspaces.layer), Layer.provide(MigratedDatabase)), { excludeTestServices: true, timeout: databaseTimeout })(
  "Sessions.layer keeps the contract",
  sessionsContract
)
