import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../../config"
import type { RateLimiterShape } from "./contract"
import { makeMemoryRateLimiter } from "./memory"
import type { RedisLimiterOptions } from "./redis"

export * from "./contract"

export class RateLimiter extends Context.Tag("RateLimiter")<RateLimiter, RateLimiterShape>() {
  /** Buckets kept in this process: right for one instance; several instances need `redis`. */
  static readonly memory = Layer.sync(RateLimiter, makeMemoryRateLimiter)

  /** Buckets in Redis, shared by every instance. ioredis is imported only when this backing is used. */
  static readonly redis = (options: RedisLimiterOptions) =>
    Layer.scoped(RateLimiter, Effect.flatMap(Effect.promise(() => import("./redis")), (redis) => redis.makeRedisRateLimiter(options)))

  /** The limiter RATE_LIMIT_STORE asks for: in this process (one instance) or in Redis (many). */
  static readonly fromConfig = Layer.unwrapEffect(
    Effect.map(AppConfig, ({ rateLimit }) =>
      rateLimit.store === "memory"
        ? RateLimiter.memory
        : RateLimiter.redis({ url: rateLimit.redisUrl, timeoutMs: rateLimit.redisTimeoutMs }))
  )
}
