import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { Members } from "../../src/services/Members"
import { Passwords } from "../../src/services/Passwords"
import { Sessions } from "../../src/services/Sessions"
import { Workspaces } from "../../src/services/Workspaces"
import { passwordsContract } from "../contracts/passwords"

// The contract of test/contracts/passwords.ts on the in-memory backing; test/integration/passwords.pg.test.ts runs it on PostgreSQL.
layer(Layer.mergeAll(Passwords.memory, Sessions.memory, Members.memory).pipe(Layer.provideMerge(Workspaces.memory)), { excludeTestServices: true })(
  "Passwords.memory keeps the contract",
  passwordsContract
)
