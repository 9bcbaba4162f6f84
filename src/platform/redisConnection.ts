import { Effect, type Scope } from "effect"
import { Redis } from "ioredis"

export interface RedisConnectionOptions {
  readonly url: string
  /** A command that takes longer than this fails (the caller then treats Redis as unavailable). */
  readonly timeoutMs: number
}

/**
 * A Redis client for one purpose (the rate limits, the failed-credential counts), closed with the scope.
 * Commands fail fast while it is disconnected instead of queueing: each caller decides what an outage
 * means for it. Start-up waits up to 5 s for the connection, so that the first requests are not taken for
 * an outage; a Redis that is not there then is reported, and handled as an outage until it is.
 */
export const connectRedis = (options: RedisConnectionOptions, purpose: string): Effect.Effect<Redis, never, Scope.Scope> =>
  Effect.gen(function*() {
    const redis = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Redis(options.url, {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          commandTimeout: options.timeoutMs,
          lazyConnect: false,
          retryStrategy: (attempt) => Math.min(attempt * 200, 2_000)
        })
      ),
      (client) => Effect.promise(() => client.quit().catch(() => client.disconnect()))
    )
    // Errors are reported per call; without a listener ioredis would print each one.
    redis.on("error", () => undefined)
    yield* Effect.async<void>((resume) => {
      if (redis.status === "ready") return resume(Effect.void)
      redis.once("ready", () => resume(Effect.void))
    }).pipe(
      Effect.timeoutTo({
        duration: "5 seconds",
        onSuccess: () => Effect.void,
        onTimeout: () => Effect.logWarning(`Redis for ${purpose} is not reachable yet`).pipe(Effect.annotateLogs({ url: options.url }))
      }),
      Effect.flatten
    )
    return redis
  })
