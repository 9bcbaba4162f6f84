/**
 * Token buckets for per-minute limits: a bucket holds up to `limit` units and refills at
 * `limit` per minute, continuously. A burst can take the whole bucket, and never more; there
 * are no window edges at which twice the limit gets through. The Redis script of the rate
 * limiter does the same arithmetic, atomically, on the server.
 */

export interface BucketState {
  readonly tokens: number
  /** Milliseconds since the epoch of the last update. */
  readonly at: number
}

export const minuteMs = 60_000

const ratePerMs = (limit: number) => limit / minuteMs

/** The bucket at `now`: refilled for the time passed, never above the limit. A new bucket is full. */
export const refill = (state: BucketState | undefined, limit: number, now: number): number =>
  state === undefined ? limit : Math.min(limit, state.tokens + Math.max(0, now - state.at) * ratePerMs(limit))

/** Milliseconds until `amount` units are available in a bucket holding `tokens`. */
export const waitFor = (tokens: number, amount: number, limit: number): number =>
  tokens >= amount ? 0 : Math.ceil((amount - tokens) / ratePerMs(limit))

/** Milliseconds until a bucket holding `tokens` is full again (what the reset headers report). */
export const untilFull = (tokens: number, limit: number): number =>
  tokens >= limit ? 0 : Math.ceil((limit - tokens) / ratePerMs(limit))
