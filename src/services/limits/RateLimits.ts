import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import { familyLimit, type Limit, modelLimit } from "../../domain/rateLimits"
import { type LimitReadings, type LimitRefusal, LimitsUnavailable, RateLimited, RequestExceedsLimit } from "../../domain/refusals"
import type { LimitFamily } from "../../domain/workspaceSettings"
import { AppConfig } from "../../config"
import type { Principal } from "../../domain/principal"
import { Metrics } from "../../platform/Metrics"
import { spansWhen } from "../../platform/traceSpans"
import { type BucketDemand, type BucketReading, RateLimiter, type RateDecision, type RateLimiterFailure } from "./RateLimiter"

/**
 * An admitted request: the workspace's limits as the decision left them (undefined when they could
 * not be checked and the request was let through), and how to settle the tokens once the use is
 * known (in the background: the store is updated shortly after, not before the answer).
 */
export interface Admission {
  readonly readings: LimitReadings | undefined
  readonly settle: (usedTokens: number) => Effect.Effect<void>
}

export interface AdmissionRequest {
  readonly principal: Principal
  readonly family: LimitFamily
  /** The model, in families where each model has a limit of its own. */
  readonly model?: string | undefined
  /** Tokens reserved now: estimated input plus the most output the request may produce. */
  readonly tokens: number
}

interface Bucket {
  readonly key: string
  readonly kind: "requests" | "tokens"
  readonly limit: number
}

/** Keys of one workspace share a hash tag, so one script call can reach them all on a Redis cluster. */
export const bucketsOf = (request: AdmissionRequest): ReadonlyArray<Bucket> => {
  const workspace = request.principal.workspace
  const overrides = workspace.settings.rateLimits
  const family = familyLimit(request.family, overrides)
  const scope = `rl:{${workspace.id}}:${request.family}`
  const pair = (prefix: string, limit: Limit): ReadonlyArray<Bucket> => [
    { key: `${prefix}:requests`, kind: "requests", limit: limit.requestsPerMinute },
    { key: `${prefix}:tokens`, kind: "tokens", limit: limit.tokensPerMinute }
  ]
  const model = request.model === undefined ? undefined : modelLimit(request.family, request.model, overrides)
  return [...pair(scope, family), ...(model === undefined ? [] : pair(`${scope}:model:${request.model}`, model))]
}

/**
 * The buckets of a request with what every admission reads of them, made once per workspace snapshot, family and
 * model: their keys are text, built for every request otherwise. A snapshot is replaced (not changed) when the
 * workspace's settings change, so the cache follows it and is let go with it.
 */
interface BucketSet {
  readonly buckets: ReadonlyArray<Bucket>
  /** A request bucket's demand is one request, every time: made once (undefined at the token buckets). */
  readonly requestDemands: ReadonlyArray<BucketDemand | undefined>
  /** Where the buckets of each kind are, in `buckets` (and in the limiter's readings, which follow it). */
  readonly requestsAt: ReadonlyArray<number>
  readonly tokensAt: ReadonlyArray<number>
  /** The least token limit: a request asking for more can never pass. */
  readonly leastTokenLimit: number
}

const bucketSetOf = (buckets: ReadonlyArray<Bucket>): BucketSet => {
  const requestsAt: Array<number> = []
  const tokensAt: Array<number> = []
  buckets.forEach((bucket, i) => (bucket.kind === "requests" ? requestsAt : tokensAt).push(i))
  return {
    buckets,
    requestDemands: buckets.map((bucket) => (bucket.kind === "requests" ? { key: bucket.key, limit: bucket.limit, amount: 1 } : undefined)),
    requestsAt,
    tokensAt,
    leastTokenLimit: Math.min(...tokensAt.map((i) => buckets[i]!.limit))
  }
}

const bucketCache = new WeakMap<Principal["workspace"], Map<string, BucketSet>>()

const cachedBucketsOf = (request: AdmissionRequest): BucketSet => {
  const workspace = request.principal.workspace
  let known = bucketCache.get(workspace)
  if (known === undefined) {
    known = new Map()
    bucketCache.set(workspace, known)
  }
  const key = request.model === undefined ? request.family : `${request.family}\n${request.model}`
  const cached = known.get(key)
  if (cached !== undefined) return cached
  const made = bucketSetOf(bucketsOf(request))
  // Model names come from clients: an unknown one is refused before admission, but the map stays bounded anyway.
  if (known.size >= 256) known.clear()
  known.set(key, made)
  return made
}

/** The demands of a request: the request buckets' made once, the token buckets' for its reservation. */
const demandsOf = (set: BucketSet, tokens: number): ReadonlyArray<BucketDemand> => {
  const demands = new Array<BucketDemand>(set.buckets.length)
  for (let i = 0; i < demands.length; i++) {
    const bucket = set.buckets[i]!
    demands[i] = set.requestDemands[i] ?? { key: bucket.key, limit: bucket.limit, amount: tokens }
  }
  return demands
}

/** The bucket of a kind (at `at`) with the least left: the one a client should pace itself by (the first of equals). */
const tightest = (readings: ReadonlyArray<BucketReading>, at: ReadonlyArray<number>): BucketReading => {
  let least = readings[at[0]!]!
  for (let j = 1; j < at.length; j++) {
    const reading = readings[at[j]!]!
    if (reading.remaining / reading.limit < least.remaining / least.limit) least = reading
  }
  return least
}

/** The tightest bucket of each kind, read at `at`: what the answer's limit headers show. */
const readingsOf = (set: BucketSet, readings: ReadonlyArray<BucketReading>, at: number): LimitReadings => ({
  requests: tightest(readings, set.requestsAt),
  tokens: tightest(readings, set.tokensAt),
  at
})

/**
 * Per-workspace limits (shared by all keys of a workspace) on requests and tokens per minute, per
 * family and, for the forwarded families, per model. Tokens are reserved before forwarding and
 * settled against the real use afterwards.
 */
export class RateLimits extends Context.Tag("RateLimits")<RateLimits, {
  readonly admit: (request: AdmissionRequest) => Effect.Effect<Admission, LimitRefusal>
}>() {
  static readonly layer = Layer.effect(
    RateLimits,
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const config = yield* AppConfig
      const { rateLimit } = config
      const metrics = yield* Metrics
      const span = spansWhen(config)
      const lastOutageLog = yield* Ref.make(0)

      /** Limits could not be checked: admit or refuse, as configured; logged at most every ten seconds. */
      const unavailable = (cause: unknown) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const last = yield* Ref.getAndUpdate(lastOutageLog, (at) => (now - at >= 10_000 ? now : at))
          if (now - last >= 10_000) {
            yield* Effect.logError("rate limits cannot be checked: the shared store is unavailable").pipe(
              Effect.annotateLogs({ policy: rateLimit.onStoreFailure === "open" ? "admitting (fail open)" : "refusing (fail closed)", cause: String(cause) })
            )
          }
          if (rateLimit.onStoreFailure === "open") return { readings: undefined, settle: () => Effect.void } satisfies Admission
          return yield* Effect.fail(new LimitsUnavailable())
        })

      const refuse = (request: AdmissionRequest, set: BucketSet, decision: RateDecision, now: number) => {
        metrics.rateLimited(request.family, request.principal.workspace.id)
        const short = decision.buckets.find((reading, i) => reading.remaining < (set.buckets[i]!.kind === "requests" ? 1 : request.tokens))
        return Effect.fail(new RateLimited({
          readings: readingsOf(set, decision.buckets, now),
          retryAfterMs: decision.retryAfterMs,
          family: request.family,
          model: short?.key.includes(":model:") ? request.model : undefined
        }))
      }

      /** A request larger than a whole minute's budget can never pass: refused now, saying why. */
      const refuseTooLarge = (request: AdmissionRequest, set: BucketSet, tooLarge: Bucket) =>
        Effect.gen(function*() {
          // The buckets as they are, taking nothing, for the same limit headers as every other 429.
          const reading = yield* limiter.acquire(set.buckets.map((bucket) => ({ key: bucket.key, limit: bucket.limit, amount: 0 }))).pipe(
            Effect.option
          )
          const now = yield* Clock.currentTimeMillis
          metrics.rateLimited(request.family, request.principal.workspace.id)
          return yield* Effect.fail(new RequestExceedsLimit({
            readings: reading._tag === "Some" ? readingsOf(set, reading.value.buckets, now) : undefined,
            tokens: request.tokens,
            limit: tooLarge.limit,
            model: tooLarge.key.includes(":model:") ? request.model : undefined
          }))
        })

      const unavailableLimiter = (failure: RateLimiterFailure): Effect.Effect<Admission, LimitRefusal> => unavailable(failure.cause)

      const settleFailed = (failure: RateLimiterFailure) => Effect.ignore(unavailable(failure.cause))

      /** Tokens reserved beyond (or short of) the use, settled in the token buckets. */
      const settleTokens = (set: BucketSet, difference: number) => {
        const demands = set.tokensAt.map((i): BucketDemand => ({ key: set.buckets[i]!.key, limit: set.buckets[i]!.limit, amount: difference }))
        const settled = Effect.catchAll(limiter.settle(demands), settleFailed)
        return limiter.settlesInPlace ? settled : Effect.asVoid(Effect.forkDaemon(settled))
      }

      // Every forwarded request passes here: plain steps, one match over the limiter's decision, read with the
      // clock taken in the same step (the buckets are made of the request alone: nothing happens before it runs).
      const decide = (request: AdmissionRequest): Effect.Effect<Admission, LimitRefusal> => {
        const set = cachedBucketsOf(request)
        if (request.tokens > set.leastTokenLimit) {
          return refuseTooLarge(request, set, set.buckets.find((bucket) => bucket.kind === "tokens" && request.tokens > bucket.limit)!)
        }
        return Effect.clockWith((clock) =>
          Effect.matchEffect(limiter.acquire(demandsOf(set, request.tokens)), {
            onFailure: unavailableLimiter,
            onSuccess: (decision): Effect.Effect<Admission, LimitRefusal> => {
              const now = clock.unsafeCurrentTimeMillis()
              if (!decision.allowed) return refuse(request, set, decision, now)
              return Effect.succeed({
                readings: readingsOf(set, decision.buckets, now),
                // Off the request path: the answer does not wait for a shared store to be updated.
                settle: (usedTokens) => (usedTokens === request.tokens ? Effect.void : settleTokens(set, usedTokens - request.tokens))
              } satisfies Admission)
            }
          }))
      }

      return {
        // Without traces, no span options either: nothing but the decision.
        admit: Option.isNone(config.tracing)
          ? decide
          : (request) => span("rate_limit", { attributes: { "wsapi.family": request.family } })(decide(request))
      }
    })
  )
}
