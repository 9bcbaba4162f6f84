import { layer } from "@effect/vitest"
import { Readiness } from "../../src/platform/Readiness"
import { readinessContract } from "../contracts/readiness"

// The contract of test/contracts/readiness.ts on the in-memory backing; test/integration/readiness.pg.test.ts runs it on PostgreSQL.
layer(Readiness.memory, { excludeTestServices: true })("Readiness.memory keeps the contract", readinessContract)
