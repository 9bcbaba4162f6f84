import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { Members } from "../../../src/services/people/Members"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import { membersContract } from "../../contracts/members"

// The contract of test/contracts/members.ts on the in-memory backing; test/integration/members.pg.test.ts runs it on PostgreSQL.
layer(Members.memory.pipe(Layer.provideMerge(Workspaces.memory)), { excludeTestServices: true })("Members.memory keeps the contract", membersContract)
