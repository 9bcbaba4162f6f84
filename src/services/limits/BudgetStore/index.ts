import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../../config"
import type { BudgetStoreShape } from "./contract"
import { makeMemoryBudgetStore } from "./memory"
import { makePostgresBudgetStore } from "./postgres"
import type { RedisConnectionOptions } from "../../../platform/redisConnection"

export * from "./contract"

export class BudgetStore extends Context.Tag("BudgetStore")<BudgetStore, BudgetStoreShape>() {
  /** In this process: one instance only (the in-memory harness). */
  static readonly memory = Layer.sync(BudgetStore, makeMemoryBudgetStore)

  /** In PostgreSQL, shared by every instance on the database. */
  static readonly layer = Layer.effect(BudgetStore, makePostgresBudgetStore)

  /** In Redis, shared by every instance. ioredis is imported only when this backing is used. */
  static readonly redis = (options: RedisConnectionOptions) =>
    Layer.scoped(BudgetStore, Effect.flatMap(Effect.promise(() => import("./redis")), (redis) => redis.makeRedisBudgetStore(options)))

  /** Where the rate limits are shared (RATE_LIMIT_STORE=redis), the budgets are too; otherwise in PostgreSQL. */
  static readonly fromConfig = Layer.unwrapEffect(
    Effect.map(AppConfig, ({ rateLimit }) =>
      rateLimit.store === "redis"
        ? BudgetStore.redis({ url: rateLimit.redisUrl, timeoutMs: rateLimit.redisTimeoutMs })
        : BudgetStore.layer)
  )
}
