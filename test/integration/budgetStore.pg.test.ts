import { afterAll, beforeAll, describe, layer } from "@effect/vitest"
import { Layer } from "effect"
import { BudgetStore } from "../../src/services/limits/BudgetStore"
import { budgetStoreContract } from "../contracts/budgetStore"
import { databaseTimeout, MigratedDatabase } from "../support/migratedDatabase"
import { type RedisServer, startRedis } from "../support/redis"

// The contract of test/contracts/budgetStore.ts on PostgreSQL and on Redis; test/services/limits/budgetStore.memory.test.ts
// runs it on the in-memory backing.
layer(BudgetStore.layer.pipe(Layer.provide(MigratedDatabase)), { excludeTestServices: true, timeout: databaseTimeout })(
  "BudgetStore.layer (PostgreSQL) keeps the contract",
  budgetStoreContract
)

describe("BudgetStore (Redis)", () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await startRedis()
  })
  afterAll(async () => {
    await server?.stop()
  })
  layer(Layer.suspend(() => BudgetStore.redis({ url: server.url, timeoutMs: 1_000 })), { excludeTestServices: true })(
    "BudgetStore.redis keeps the contract",
    budgetStoreContract
  )
})
