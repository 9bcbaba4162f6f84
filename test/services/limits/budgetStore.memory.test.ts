import { layer } from "@effect/vitest"
import { BudgetStore } from "../../../src/services/limits/BudgetStore"
import { budgetStoreContract } from "../../contracts/budgetStore"

// The contract of test/contracts/budgetStore.ts on the in-memory backing; test/integration/budgetStore.pg.test.ts
// runs it on PostgreSQL and Redis.
layer(BudgetStore.memory, { excludeTestServices: true })("BudgetStore.memory keeps the contract", budgetStoreContract)
