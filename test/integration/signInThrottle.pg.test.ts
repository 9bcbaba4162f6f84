import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { SignInThrottle } from "../../src/services/identity/SignInThrottle"
import { signInThrottleContract } from "../contracts/signInThrottle"
import { databaseTimeout, MigratedDatabase } from "../support/migratedDatabase"

// The contract of test/contracts/signInThrottle.ts on PostgreSQL; test/services/identity/signInThrottle.memory.test.ts runs it on the in-memory backing.
layer(SignInThrottle.layer.pipe(Layer.provide(MigratedDatabase)), { excludeTestServices: true, timeout: databaseTimeout })(
  "SignInThrottle.layer keeps the contract",
  signInThrottleContract
)
