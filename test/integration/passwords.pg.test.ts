import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { Members } from "../../src/services/Members"
import { Passwords } from "../../src/services/Passwords"
import { Sessions } from "../../src/services/Sessions"
import { Workspaces } from "../../src/services/Workspaces"
import { passwordsContract } from "../contracts/passwords"
import { databaseTimeout, MigratedDatabase } from "../support/migratedDatabase"

// The contract of test/contracts/passwords.ts on PostgreSQL; test/services/passwords.memory.test.ts runs it on the in-memory backing.
layer(
  Layer.mergeAll(Passwords.layer, Sessions.layer, Members.layer).pipe(Layer.provideMerge(Workspaces.layer), Layer.provide(MigratedDatabase)),
  { excludeTestServices: true, timeout: databaseTimeout }
)("Passwords.layer keeps the contract", passwordsContract)
