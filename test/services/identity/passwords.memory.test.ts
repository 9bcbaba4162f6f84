import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { Members } from "../../../src/services/people/Members"
import { Passwords } from "../../../src/services/identity/Passwords"
import { Sessions } from "../../../src/services/identity/Sessions"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import { passwordsContract } from "../../contracts/passwords"

// The contract of test/contracts/passwords.ts on the in-memory backing; test/integration/passwords.pg.test.ts runs it on PostgreSQL.
layer(Layer.mergeAll(Passwords.memory, Sessions.memory, Members.memory).pipe(Layer.provideMerge(Workspaces.memory)), { excludeTestServices: true })(
  "Passwords.memory keeps the contract",
  passwordsContract
)
