import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { ApiKeys } from "../../../src/services/identity/ApiKeys"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import { apiKeysContract } from "../../contracts/apiKeys"

// The contract of test/contracts/apiKeys.ts on the in-memory backing; test/integration/apiKeys.pg.test.ts runs it on PostgreSQL.
layer(ApiKeys.memory.pipe(Layer.provideMerge(Workspaces.memory)), { excludeTestServices: true })("ApiKeys.memory keeps the contract", apiKeysContract)
