import { Effect, Layer } from "effect"
import { AppConfig } from "../../config"
import { RateLimiterMemory } from "./memory"

/**
 * The limiter RATE_LIMIT_STORE asks for: in this process (one instance) or in Redis (many). The Redis
 * backend (and ioredis) is imported only when chosen, so a single instance does not carry it in memory.
 */
export const RateLimiterLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const { rateLimit } = yield* AppConfig
    if (rateLimit.store === "memory") return RateLimiterMemory
    const { RateLimiterRedis } = yield* Effect.promise(() => import("./redis"))
    return RateLimiterRedis({ url: rateLimit.redisUrl, timeoutMs: rateLimit.redisTimeoutMs })
  })
)
