import { Effect, Layer } from "effect"
import { AppConfig } from "../../config"
import { RateLimiterMemory } from "./memory"
import { RateLimiterRedis } from "./redis"

/** The limiter RATE_LIMIT_STORE asks for: in this process (one instance) or in Redis (many). */
export const RateLimiterLive = Layer.unwrapEffect(
  Effect.map(AppConfig, ({ rateLimit }) =>
    rateLimit.store === "redis"
      ? RateLimiterRedis({ url: rateLimit.redisUrl, timeoutMs: rateLimit.redisTimeoutMs })
      : RateLimiterMemory
  )
)
