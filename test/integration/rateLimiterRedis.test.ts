import { afterAll, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { RateLimiter } from "../../src/services/limits/RateLimiter"
import { rateLimiterContract } from "../contracts/rateLimiter"
import { type RedisServer, startRedis } from "../support/redis"

describe("RateLimiter (Redis)", () => {
  let server: RedisServer
  let client: Redis

  beforeAll(async () => {
    server = await startRedis()
    client = new Redis(server.url)
  })
  afterAll(async () => {
    await client?.quit()
    await server?.stop()
  })

  // The contract of test/contracts/rateLimiter.ts (built after the server above started); Redis's own clock
  // moves between calls: a second of refill tolerated.
  layer(Layer.suspend(() => RateLimiter.redis({ url: server.url, timeoutMs: 1_000 })), { excludeTestServices: true })(
    "RateLimiter.redis keeps the contract",
    (it) => rateLimiterContract(it, { refillSlackMs: 1_000 })
  )

  // Redis keeps its own time (the script reads TIME), so these tests run on the real clock.
  const withLimiter = <A, E>(effect: Effect.Effect<A, E, RateLimiter>) =>
    Effect.provide(effect, RateLimiter.redis({ url: server.url, timeoutMs: 1_000 }))

  it.live("keeps a bucket in debt until it would be full again, not only two minutes", () =>
    withLimiter(Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const key = "rl:{debt}:chat_completions:tokens"
      const tokens = (amount: number) => [{ key, limit: 60_000, amount }]
      // Reserved 1,000, used 200,000: the bucket ends 140,000 in debt, 200,000 below full.
      expect((yield* limiter.acquire(tokens(1_000))).allowed).toBe(true)
      yield* limiter.settle(tokens(199_000))
      const ttl = yield* Effect.promise(() => client.pttl(key))
      // 200,000 tokens at 60,000 a minute refill in 200 s: the debt outlives the two minutes.
      // (Some slack below for a loaded machine: anything near 200 s shows the debt outlives 120.)
      expect(ttl).toBeGreaterThan(190_000)
      expect(ttl).toBeLessThanOrEqual(200_000)
      const after = yield* limiter.acquire(tokens(1))
      expect(after.allowed).toBe(false)
      expect(after.buckets[0]!.remaining).toBeLessThan(-139_000)
    })))

  it.live("refills continuously: a client that waits retry-after gets in", () =>
    withLimiter(Effect.gen(function*() {
      const limiter = yield* RateLimiter
      // 6,000 a minute: 100 a second, so the refill is visible within a test.
      const requests = (amount: number) => [{ key: "rl:{refill}:chat_completions:requests", limit: 6_000, amount }]
      expect((yield* limiter.acquire(requests(6_000))).allowed).toBe(true)
      // 300 take 3 s to come back: refused however slowly this machine gets here.
      const refused = yield* limiter.acquire(requests(300))
      expect(refused.allowed).toBe(false)
      expect(refused.retryAfterMs).toBeGreaterThan(0)
      expect(refused.retryAfterMs).toBeLessThanOrEqual(3_000)
      yield* Effect.sleep(refused.retryAfterMs + 20)
      const admitted = yield* limiter.acquire(requests(300))
      expect(admitted.allowed).toBe(true)
    })))

  it.live("expires a bucket that is not in debt two minutes after its last change", () =>
    withLimiter(Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const key = "rl:{plain}:chat_completions:requests"
      yield* limiter.acquire([{ key, limit: 10, amount: 1 }])
      const ttl = yield* Effect.promise(() => client.pttl(key))
      expect(ttl).toBeGreaterThan(110_000)
      expect(ttl).toBeLessThanOrEqual(120_000)
    })))
})
