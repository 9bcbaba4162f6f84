import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { DatabaseHealth } from "../../src/platform/Database"
import { Readiness } from "../../src/platform/Readiness"
import { readinessContract } from "../contracts/readiness"
import { databaseTimeout, MigratedDatabase } from "../support/migratedDatabase"

// The contract of test/contracts/readiness.ts on PostgreSQL; test/platform/readiness.memory.test.ts runs it on the in-memory backing.
layer(Readiness.layer.pipe(Layer.provide([MigratedDatabase, DatabaseHealth.external])), { excludeTestServices: true, timeout: databaseTimeout })(
  "Readiness.layer keeps the contract",
  readinessContract
)
