import { Data, type Effect } from "effect"

/** Units wanted from one bucket: requests or tokens of one workspace, family or model. */
export interface BucketDemand {
  readonly key: string
  /** Units per minute: the bucket's size and refill. */
  readonly limit: number
  /** Units to take (negative: give back, when a reservation turned out larger than the use). */
  readonly amount: number
}

/** A bucket after a decision, for the rate-limit headers. */
export interface BucketReading {
  readonly key: string
  readonly limit: number
  readonly remaining: number
  /** Milliseconds until the bucket is full again. */
  readonly resetMs: number
}

export interface RateDecision {
  readonly allowed: boolean
  /** When refused: milliseconds until every bucket can give what was asked. */
  readonly retryAfterMs: number
  readonly buckets: ReadonlyArray<BucketReading>
}

/** The shared store (Redis) could not be asked; what happens then is a setting. */
export class RateLimiterFailure extends Data.TaggedError("RateLimiterFailure")<{ readonly cause: unknown }> {}

/**
 * Per-minute token buckets. `acquire` takes from all the given buckets or from none (one atomic
 * decision, on one instance or across instances); `settle` adds or gives back units afterwards,
 * when the real use is known, even below zero (a debt the next requests wait for).
 */
export interface RateLimiterShape {
  readonly acquire: (demands: ReadonlyArray<BucketDemand>) => Effect.Effect<RateDecision, RateLimiterFailure>
  readonly settle: (demands: ReadonlyArray<BucketDemand>) => Effect.Effect<void, RateLimiterFailure>
  /** Whether `settle` is done at once, in memory: then it is cheaper to run in place than in a fiber of its own. */
  readonly settlesInPlace: boolean
  /** Whether the shared store answers, for /readyz; absent when the buckets are in this process. */
  readonly reachable?: Effect.Effect<void, RateLimiterFailure>
}
