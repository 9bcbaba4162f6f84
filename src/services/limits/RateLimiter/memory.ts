import { Effect } from "effect"
import { refill, untilFull, waitFor } from "../../../domain/tokenBucket"
import type { BucketDemand, BucketReading, RateLimiterShape } from "./contract"

/** A bucket's level when last changed: changed in place, it is this limiter's own. */
interface Level {
  tokens: number
  at: number
}

/** Buckets kept in this process: right for one instance; several instances need the Redis layer. */
export const makeMemoryRateLimiter = (): RateLimiterShape => {
  // Decisions are synchronous, so no other request can interleave between reading and writing.
  const buckets = new Map<string, Level>()
  const levels = (demands: ReadonlyArray<BucketDemand>, now: number): Array<number> => {
    const found = new Array<number>(demands.length)
    for (let i = 0; i < demands.length; i++) found[i] = refill(buckets.get(demands[i]!.key), demands[i]!.limit, now)
    return found
  }
  // Every forwarded request changes its buckets: a level changed in place, not a new one each time.
  const store = (demands: ReadonlyArray<BucketDemand>, levelsNow: ReadonlyArray<number>, now: number) => {
    for (let i = 0; i < demands.length; i++) {
      const demand = demands[i]!
      const tokens = Math.min(demand.limit, levelsNow[i]! - demand.amount)
      const level = buckets.get(demand.key)
      if (level === undefined) buckets.set(demand.key, { tokens, at: now })
      else {
        level.tokens = tokens
        level.at = now
      }
    }
  }
  return {
    // One step each: the clock read and the decision in the same callback (every forwarded request passes here).
    acquire: (demands) =>
      Effect.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        const before = levels(demands, now)
        let retryAfterMs = 0
        for (let i = 0; i < demands.length; i++) {
          retryAfterMs = Math.max(retryAfterMs, waitFor(before[i]!, demands[i]!.amount, demands[i]!.limit))
        }
        const allowed = retryAfterMs === 0
        if (allowed) store(demands, before, now)
        const readings = new Array<BucketReading>(demands.length)
        for (let i = 0; i < demands.length; i++) {
          const d = demands[i]!
          const remaining = allowed ? before[i]! - d.amount : before[i]!
          readings[i] = { key: d.key, limit: d.limit, remaining, resetMs: untilFull(remaining, d.limit) }
        }
        return Effect.succeed({ allowed, retryAfterMs, buckets: readings })
      }),
    settle: (demands) =>
      Effect.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        store(demands, levels(demands, now), now)
        return Effect.void
      }),
    settlesInPlace: true
  }
}
