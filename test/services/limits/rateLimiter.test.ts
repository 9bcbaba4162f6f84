import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { refill, untilFull, waitFor } from "../../../src/domain/tokenBucket"
import { resetDuration } from "../../../src/domain/rateLimits"
import { RateLimiter } from "../../../src/services/limits/RateLimiter"

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

describe("RateLimiter (memory)", () => {
  it.effect("admits exactly the limit from a concurrent burst, then refills with time", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const decisions = yield* Effect.all(Array.from({ length: 25 }, () => limiter.acquire(demand(1))), { concurrency: "unbounded" })
      expect(decisions.filter((d) => d.allowed)).toHaveLength(10)
      const refused = decisions.find((d) => !d.allowed)!
      expect(refused.retryAfterMs).toBe(6_000)
      yield* TestClock.adjust("5999 millis")
      expect((yield* limiter.acquire(demand(1))).allowed).toBe(false)
      yield* TestClock.adjust("1 millis")
      expect((yield* limiter.acquire(demand(1))).allowed).toBe(true)
      // A whole window later the bucket is full again, not fuller.
      yield* TestClock.adjust("2 minutes")
      const again = yield* Effect.all(Array.from({ length: 12 }, () => limiter.acquire(demand(1))))
      expect(again.filter((d) => d.allowed)).toHaveLength(10)
    }).pipe(Effect.provide(RateLimiter.memory)))

  it.effect("takes from every bucket or from none", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const both = [
        { key: "a", limit: 100, amount: 60 },
        { key: "b", limit: 50, amount: 60 }
      ]
      const refused = yield* limiter.acquire(both)
      expect(refused.allowed).toBe(false)
      const a = yield* limiter.acquire([{ key: "a", limit: 100, amount: 100 }])
      expect(a.allowed).toBe(true)
    }).pipe(Effect.provide(RateLimiter.memory)))

  it.effect("settles reservations: gives back unused tokens and takes extra use as a debt", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const tokens = (amount: number) => [{ key: "t", limit: 1_000, amount }]
      yield* limiter.acquire(tokens(800))
      yield* limiter.settle(tokens(-700))
      expect((yield* limiter.acquire(tokens(0))).buckets[0]!.remaining).toBe(900)
      yield* limiter.settle(tokens(1_500))
      const after = yield* limiter.acquire(tokens(1))
      expect(after.allowed).toBe(false)
      expect(after.buckets[0]!.remaining).toBe(-600)
      expect(after.retryAfterMs).toBe(Math.ceil(601 / (1_000 / 60_000)))
    }).pipe(Effect.provide(RateLimiter.memory)))
})
