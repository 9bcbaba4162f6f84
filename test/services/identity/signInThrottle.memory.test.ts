import { layer } from "@effect/vitest"
import { SignInThrottle } from "../../../src/services/identity/SignInThrottle"
import { signInThrottleContract } from "../../contracts/signInThrottle"

// The contract of test/contracts/signInThrottle.ts on the in-memory backing; test/integration/signInThrottle.pg.test.ts runs it on PostgreSQL.
layer(SignInThrottle.memory, { excludeTestServices: true })("SignInThrottle.memory keeps the contract", signInThrottleContract)
