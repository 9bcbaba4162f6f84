import { expect, type Vitest } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { RateLimiter } from "../../src/services/limits/RateLimiter"

/** A bucket key of its own for each case: the backings keep buckets between cases. */
const freshKey = (name: string) => `rl:{${crypto.randomBytes(4).toString("hex")}}:${name}`

/**
 * The behaviour both backings of RateLimiter (memory, redis) must show. Redis keeps its own time, so a
 * few milliseconds pass between two calls there: `refillSlackMs` is how much refill a case tolerates
 * (0 on the memory backing under the test clock, where no time passes).
 */
export const rateLimiterContract = <ExcludeTestServices extends boolean>(it: Vitest.MethodsNonLive<RateLimiter, ExcludeTestServices>, options: { readonly refillSlackMs: number }) => {
  const slack = options.refillSlackMs

  it.effect("admits exactly the limit from a concurrent burst, and tells the refused when one token is back", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const key = freshKey("chat_completions:requests")
      const decisions = yield* Effect.all(Array.from({ length: 25 }, () => limiter.acquire([{ key, limit: 10, amount: 1 }])), { concurrency: "unbounded" })
      expect(decisions.filter((d) => d.allowed)).toHaveLength(10)
      const refused = decisions.find((d) => !d.allowed)!
      // 10 a minute: one token every 6 s.
      expect(refused.retryAfterMs).toBeLessThanOrEqual(6_000)
      expect(refused.retryAfterMs).toBeGreaterThanOrEqual(6_000 - slack)
    }))

  it.effect("takes from every bucket or from none", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const [a, b] = [freshKey("a"), freshKey("b")]
      const refused = yield* limiter.acquire([
        { key: a, limit: 100, amount: 60 },
        { key: b, limit: 50, amount: 60 }
      ])
      expect(refused.allowed).toBe(false)
      expect((yield* limiter.acquire([{ key: a, limit: 100, amount: 100 }])).allowed).toBe(true)
    }))

  it.effect("settles reservations: gives back unused tokens and takes extra use as a debt", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const key = freshKey("chat_completions:tokens")
      const tokens = (amount: number) => [{ key, limit: 1_000, amount }]
      // 1,000 a minute: one token every 60 ms.
      const refilled = slack / 60
      yield* limiter.acquire(tokens(800))
      yield* limiter.settle(tokens(-700))
      const given = (yield* limiter.acquire(tokens(0))).buckets[0]!.remaining
      expect(given).toBeGreaterThanOrEqual(900)
      expect(given).toBeLessThanOrEqual(900 + refilled)
      yield* limiter.settle(tokens(1_500))
      const after = yield* limiter.acquire(tokens(1))
      expect(after.allowed).toBe(false)
      expect(after.buckets[0]!.remaining).toBeGreaterThanOrEqual(-600)
      expect(after.buckets[0]!.remaining).toBeLessThanOrEqual(-600 + 2 * refilled)
      expect(after.retryAfterMs).toBeLessThanOrEqual(Math.ceil(601 / (1_000 / 60_000)))
      expect(after.retryAfterMs).toBeGreaterThanOrEqual(Math.ceil(601 / (1_000 / 60_000)) - 2 * slack)
    }))
}
