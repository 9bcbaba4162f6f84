import { Effect } from "effect"
import { type BucketState, refill, untilFull, waitFor } from "../../../domain/tokenBucket"
import type { BucketDemand, RateLimiterShape } from "./contract"

/** Buckets kept in this process: right for one instance; several instances need the Redis layer. */
export const makeMemoryRateLimiter = (): RateLimiterShape => {
  // Decisions are synchronous, so no other request can interleave between reading and writing.
  const buckets = new Map<string, BucketState>()
  const levels = (demands: ReadonlyArray<BucketDemand>, now: number) =>
    demands.map((demand) => refill(buckets.get(demand.key), demand.limit, now))
  const store = (demands: ReadonlyArray<BucketDemand>, levelsNow: ReadonlyArray<number>, now: number) =>
    demands.forEach((demand, i) =>
      buckets.set(demand.key, { tokens: Math.min(demand.limit, levelsNow[i]! - demand.amount), at: now })
    )
  return {
    // One step each: the clock read and the decision in the same callback (every forwarded request passes here).
    acquire: (demands) =>
      Effect.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        const before = levels(demands, now)
        const retryAfterMs = Math.max(0, ...demands.map((d, i) => waitFor(before[i]!, d.amount, d.limit)))
        const allowed = retryAfterMs === 0
        if (allowed) store(demands, before, now)
        return Effect.succeed({
          allowed,
          retryAfterMs,
          buckets: demands.map((d, i) => {
            const remaining = allowed ? before[i]! - d.amount : before[i]!
            return { key: d.key, limit: d.limit, remaining, resetMs: untilFull(remaining, d.limit) }
          })
        })
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
