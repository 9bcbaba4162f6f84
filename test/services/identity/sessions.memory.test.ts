import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { Sessions } from "../../../src/services/identity/Sessions"
import { Members } from "../../../src/services/people/Members"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import { sessionsContract } from "../../contracts/sessions"

// The contract of test/contracts/sessions.ts on the in-memory backing; test/integration/sessions.pg.test.ts runs it on PostgreSQL.
layer(Layer.mergeAll(Sessions.memory, Members.memory).pipe(Layer.provideMerge(Workspaces.memory)), { excludeTestServices: true })("Sessions.memory keeps the contract", sessionsContract)
