import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { workspacesContract } from "../contracts/workspaces"
import { databaseTimeout, MigratedDatabase } from "../support/migratedDatabase"

// The contract of test/contracts/workspaces.ts on PostgreSQL; test/services/workspaces/workspaces.memory.test.ts runs it on the in-memory backing.
layer(Workspaces.layer.pipe(Layer.provide(MigratedDatabase)), { excludeTestServices: true, timeout: databaseTimeout })(
  "Workspaces.layer keeps the contract",
  workspacesContract
)
