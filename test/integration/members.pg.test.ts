import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { Members } from "../../src/services/people/Members"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { membersContract } from "../contracts/members"
import { databaseTimeout, MigratedDatabase } from "../support/migratedDatabase"

// The contract of test/contracts/members.ts on PostgreSQL; test/services/people/members.memory.test.ts runs it on the in-memory backing.
layer(Members.layer.pipe(Layer.provideMerge(Workspaces.layer), Layer.provide(MigratedDatabase)), { excludeTestServices: true, timeout: databaseTimeout })(
  "Members.layer keeps the contract",
  membersContract
)
