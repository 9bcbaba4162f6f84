import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { Members } from "../../src/services/people/Members"
import { Passwords } from "../../src/services/identity/Passwords"
import { Sessions } from "../../src/services/identity/Sessions"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { passwordsContract } from "../contracts/passwords"
import { databaseTimeout, MigratedDatabase } from "../support/migratedDatabase"

// The contract of test/contracts/passwords.ts on PostgreSQL; test/services/identity/passwords.memory.test.ts runs it on the in-memory backing.
layer(
  Layer.mergeAll(Passwords.layer, Sessions.layer, Members.layer).pipe(Layer.provideMerge(Workspaces.layer), Layer.provide(MigratedDatabase)),
  { excludeTestServices: true, timeout: databaseTimeout }
)("Passwords.layer keeps the contract", passwordsContract)
