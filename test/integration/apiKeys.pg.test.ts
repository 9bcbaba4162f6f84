import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { ApiKeys } from "../../src/services/identity/ApiKeys"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { apiKeysContract } from "../contracts/apiKeys"
import { databaseTimeout, MigratedDatabase } from "../support/migratedDatabase"

// The contract of test/contracts/apiKeys.ts on PostgreSQL; test/services/identity/apiKeys.memory.test.ts runs it on the in-memory backing.
layer(ApiKeys.layer.pipe(Layer.provideMerge(Workspaces.layer), Layer.provide(MigratedDatabase)), { excludeTestServices: true, timeout: databaseTimeout })(
  "ApiKeys.layer keeps the contract",
  apiKeysContract
)
