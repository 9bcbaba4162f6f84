import { Clock, Context, Data, Effect, Layer, Ref } from "effect"
import type { ErrorFormat, Problem } from "../domain/problem"
import { familyLimit, type Limit, modelLimit, resetDuration } from "../domain/rateLimits"
import type { LimitFamily } from "../domain/workspaceSettings"
import { AppConfig } from "../config"
import { maxRetryAfterMs } from "../domain/protocols/untrusted"
import type { Principal } from "../domain/principal"
import { type BucketDemand, type BucketReading, RateLimiter, type RateDecision } from "./RateLimiter"

/**
 * A refused request: 429 (or 503 when limits cannot be checked and the setting is to fail closed).
 * A tagged value, not an Error: 429s come in floods and nothing reads their stacks.
 */
export class RateLimited extends Data.TaggedClass("RateLimited")<{
  readonly problem: Problem
  readonly headers: Readonly<Record<string, string>>
}> {}

/**
 * An admitted request: the headers to answer with, and how to settle the tokens once the use is
 * known (in the background: the store is updated shortly after, not before the answer).
 */
export interface Admission {
  readonly headers: Readonly<Record<string, string>>
  readonly settle: (usedTokens: number) => Effect.Effect<void>
}

export interface AdmissionRequest {
  readonly principal: Principal
  readonly family: LimitFamily
  /** The model, in families where each model has a limit of its own. */
  readonly model?: string | undefined
  /** Tokens reserved now: estimated input plus the most output the request may produce. */
  readonly tokens: number
  /** Which header set to answer with. */
  readonly format: ErrorFormat
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

/** The bucket of each kind with the least left: the one a client should pace itself by. */
const tightest = (buckets: ReadonlyArray<Bucket>, readings: ReadonlyArray<BucketReading>, kind: Bucket["kind"]) => {
  const ofKind = readings.filter((_, i) => buckets[i]!.kind === kind)
  return ofKind.reduce((a, b) => (b.remaining / b.limit < a.remaining / a.limit ? b : a))
}

/** The rate-limit headers each protocol's clients know. provider_c uses the chat-completions set. */
const limitHeaders = (format: ErrorFormat, requests: BucketReading, tokens: BucketReading, now: number): Record<string, string> => {
  const remaining = (reading: BucketReading) => String(Math.max(0, Math.floor(reading.remaining)))
  if (format === "provider_b") {
    const at = (reading: BucketReading) => new Date(now + reading.resetMs).toISOString().replace(/\.\d{3}Z$/, "Z")
    return {
      "anthropic-ratelimit-requests-limit": String(requests.limit),
      "anthropic-ratelimit-requests-remaining": remaining(requests),
      "anthropic-ratelimit-requests-reset": at(requests),
      "anthropic-ratelimit-tokens-limit": String(tokens.limit),
      "anthropic-ratelimit-tokens-remaining": remaining(tokens),
      "anthropic-ratelimit-tokens-reset": at(tokens)
    }
  }
  return {
    "x-ratelimit-limit-requests": String(requests.limit),
    "x-ratelimit-remaining-requests": remaining(requests),
    "x-ratelimit-reset-requests": resetDuration(requests.resetMs),
    "x-ratelimit-limit-tokens": String(tokens.limit),
    "x-ratelimit-remaining-tokens": remaining(tokens),
    "x-ratelimit-reset-tokens": resetDuration(tokens.resetMs)
  }
}

/**
 * Both retry hints the client libraries read: whole seconds (at least 1) and exact milliseconds,
 * never more than 600 s (a client told to wait longer asks again then, and is told anew).
 */
export const retryHeaders = (retryAfterMs: number): Record<string, string> => {
  const ms = Math.min(maxRetryAfterMs, retryAfterMs)
  return {
    "retry-after": String(Math.max(1, Math.ceil(ms / 1_000))),
    "retry-after-ms": String(Math.max(1, Math.ceil(ms)))
  }
}

const familyNames: Readonly<Record<LimitFamily, string>> = {
  usage_export: "usage export",
  chat_completions: "chat completion",
  messages: "messages",
  fim: "FIM completion",
  embeddings: "embeddings"
}

/**
 * Per-workspace limits (shared by all keys of a workspace) on requests and tokens per minute, per
 * family and, for the forwarded families, per model. Tokens are reserved before forwarding and
 * settled against the real use afterwards.
 */
export class RateLimits extends Context.Tag("RateLimits")<RateLimits, {
  readonly admit: (request: AdmissionRequest) => Effect.Effect<Admission, RateLimited>
}>() {
  static readonly layer = Layer.effect(
    RateLimits,
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const { rateLimit } = yield* AppConfig
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
          if (rateLimit.onStoreFailure === "open") return { headers: {}, settle: () => Effect.void } satisfies Admission
          return yield* Effect.fail(new RateLimited({
            problem: { status: 503, code: "rate_limit_unavailable", message: "Rate limits cannot be checked right now. Retry shortly." },
            headers: retryHeaders(1_000)
          }))
        })

      const refuse = (request: AdmissionRequest, buckets: ReadonlyArray<Bucket>, decision: RateDecision, now: number) => {
        const requests = tightest(buckets, decision.buckets, "requests")
        const tokens = tightest(buckets, decision.buckets, "tokens")
        const short = decision.buckets.find((reading, i) => reading.remaining < (buckets[i]!.kind === "requests" ? 1 : request.tokens))
        const what = short?.key.includes(":model:") ? `model ${request.model}` : `${familyNames[request.family]} requests of this workspace`
        return Effect.fail(new RateLimited({
          problem: {
            status: 429,
            code: "rate_limit_exceeded",
            message: `Rate limit reached for ${what}. Retry in ${Math.ceil(decision.retryAfterMs / 1_000)} s, or ask for a higher limit.`
          },
          headers: { ...limitHeaders(request.format, requests, tokens, now), ...retryHeaders(decision.retryAfterMs) }
        }))
      }

      return {
        admit: (request) =>
          Effect.gen(function*() {
            const buckets = bucketsOf(request)
            // A request larger than a whole minute's budget can never pass: refuse it now, and say why.
            const tooLarge = buckets.find((bucket) => bucket.kind === "tokens" && request.tokens > bucket.limit)
            if (tooLarge) {
              // The buckets as they are, taking nothing, for the same limit headers as every other 429.
              const reading = yield* limiter.acquire(buckets.map((bucket) => ({ key: bucket.key, limit: bucket.limit, amount: 0 }))).pipe(
                Effect.option
              )
              const now = yield* Clock.currentTimeMillis
              const current = reading._tag === "Some"
                ? limitHeaders(request.format, tightest(buckets, reading.value.buckets, "requests"), tightest(buckets, reading.value.buckets, "tokens"), now)
                : {}
              return yield* Effect.fail(new RateLimited({
                problem: {
                  status: 429,
                  code: "request_exceeds_limit",
                  message: `This request needs about ${request.tokens} tokens, more than the limit of ${tooLarge.limit} tokens per minute${tooLarge.key.includes(":model:") ? ` for ${request.model}` : ""}. Lower max_tokens or the input, or ask for a higher limit.`
                },
                // No retry-after: waiting would not help, so the client libraries must not retry it.
                headers: { ...current, "x-should-retry": "false" }
              }))
            }
            const demands: ReadonlyArray<BucketDemand> = buckets.map((bucket) => ({
              key: bucket.key,
              limit: bucket.limit,
              amount: bucket.kind === "requests" ? 1 : request.tokens
            }))
            const decision = yield* limiter.acquire(demands).pipe(Effect.either)
            if (decision._tag === "Left") return yield* unavailable(decision.left.cause)
            const now = yield* Clock.currentTimeMillis
            if (!decision.right.allowed) return yield* refuse(request, buckets, decision.right, now)
            const readings = decision.right.buckets
            const tokenBuckets = demands.filter((_, i) => buckets[i]!.kind === "tokens")
            return {
              headers: limitHeaders(request.format, tightest(buckets, readings, "requests"), tightest(buckets, readings, "tokens"), now),
              // Off the request path: the answer does not wait for a shared store to be updated.
              settle: (usedTokens) => {
                if (usedTokens === request.tokens) return Effect.void
                const settled = limiter.settle(tokenBuckets.map((d) => ({ ...d, amount: usedTokens - request.tokens }))).pipe(
                  Effect.catchAll((error) => unavailable(error.cause).pipe(Effect.ignore))
                )
                return limiter.settlesInPlace ? settled : Effect.asVoid(Effect.forkDaemon(settled))
              }
            } satisfies Admission
          })
      }
    })
  )
}
