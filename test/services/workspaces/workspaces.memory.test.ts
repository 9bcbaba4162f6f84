import { layer } from "@effect/vitest"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import { workspacesContract } from "../../contracts/workspaces"

// The contract of test/contracts/workspaces.ts on the in-memory backing; test/integration/workspaces.pg.test.ts runs it on PostgreSQL.
layer(Workspaces.memory, { excludeTestServices: true })("Workspaces.memory keeps the contract", workspacesContract)
