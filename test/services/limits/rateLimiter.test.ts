import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { refill, untilFull, waitFor } from "../../../src/domain/tokenBucket"
import { resetDuration } from "../../../src/domain/rateLimits"
import { RateLimiter } from "../../../src/services/limits/RateLimiter"
import { rateLimiterContract } from "../../contracts/rateLimiter"

const demand = (amount: number, limit = 10) => [{ key: "rl:{w}:chat_completions:requests", limit, amount }]

describe("token buckets", () => {
  it("refill at the limit per minute, never above it", () => {
    expect(refill(undefined, 60, 0)).toBe(60)
    expect(refill({ tokens: 0, at: 0 }, 60, 1_000)).toBeCloseTo(1)
    expect(refill({ tokens: 59.5, at: 0 }, 60, 60_000)).toBe(60)
    expect(waitFor(0.5, 1, 60)).toBe(500)
    expect(waitFor(2, 1, 60)).toBe(0)
    expect(untilFull(30, 60)).toBe(30_000)
  })

  it("write reset durations as the chat-completions protocol does", () => {
    expect(resetDuration(20)).toBe("20ms")
    expect(resetDuration(1_500)).toBe("1.5s")
    expect(resetDuration(360_000)).toBe("6m0s")
  })
})

// The contract of test/contracts/rateLimiter.ts on the memory backing (no time passes under the test clock);
// test/integration/rateLimiterRedis.test.ts runs it on Redis.
layer(RateLimiter.memory)("RateLimiter.memory keeps the contract", (it) => rateLimiterContract(it, { refillSlackMs: 0 }))

describe("RateLimiter (memory)", () => {
  it.effect("refills with the clock: one token 6 s after the burst, a whole window later full again, not fuller", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const decisions = yield* Effect.all(Array.from({ length: 25 }, () => limiter.acquire(demand(1))), { concurrency: "unbounded" })
      expect(decisions.filter((d) => d.allowed)).toHaveLength(10)
      yield* TestClock.adjust("5999 millis")
      expect((yield* limiter.acquire(demand(1))).allowed).toBe(false)
      yield* TestClock.adjust("1 millis")
      expect((yield* limiter.acquire(demand(1))).allowed).toBe(true)
      yield* TestClock.adjust("2 minutes")
      const again = yield* Effect.all(Array.from({ length: 12 }, () => limiter.acquire(demand(1))))
      expect(again.filter((d) => d.allowed)).toHaveLength(10)
    }).pipe(Effect.provide(RateLimiter.memory)))
})
