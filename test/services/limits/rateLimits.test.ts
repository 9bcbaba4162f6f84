import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { AppConfig } from "../../../src/config"
import { defaultWorkspaceSettings } from "../../../src/domain/workspaceSettings"
import type { Principal } from "../../../src/domain/principal"
import { Metrics } from "../../../src/platform/Metrics"
import { RateLimiter } from "../../../src/services/limits/RateLimiter"
import { type Admission, RateLimits } from "../../../src/services/limits/RateLimits"
import { providerA } from "../../../src/providers/providerA/dialect"
import { admissionHeaders, renderRefusal } from "../../../src/providers/render"

const principal: Principal = {
  keyId: "key-1",
  scopes: ["COMPLETION_API"],
  workspace: { id: "00000000-0000-4000-8000-000000000001", name: "limits", settings: defaultWorkspaceSettings, createdAt: new Date(0) }
}

const limitsOn = (limiter: Layer.Layer<RateLimiter>) =>
  RateLimits.layer.pipe(
    Layer.provide(limiter),
    Layer.provide(Metrics.none),
    Layer.provide(AppConfig.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATA_DIR", "/tmp/rate-limits-unit"]]))))
  )

const remainingTokens = (headers: Readonly<Record<string, string>>) => Number(headers["x-ratelimit-remaining-tokens"])

/** What provider_a's clients are answered with: admissions and refusals rendered by its dialect. */
const headersOf = (admission: Admission) => admissionHeaders(providerA, admission.readings)

describe("RateLimits", () => {
  it.effect("settles a reservation in place when the limiter is in memory: the next decision sees it at once", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      const admit = (tokens: number) => limits.admit({ principal, family: "chat_completions", tokens })
      const first = yield* admit(4_000)
      // 4,000 reserved, 1,000 used: 3,000 come back before anything else runs.
      yield* first.settle(1_000)
      const second = yield* admit(0)
      expect(remainingTokens(headersOf(second))).toBeGreaterThanOrEqual(remainingTokens(headersOf(first)) + 3_000 - 1)
    }).pipe(Effect.provide(limitsOn(RateLimiter.memory))))

  it.effect("refuses a request larger than the limit with the limit headers, taking nothing, and no retry-after", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      const admit = (tokens: number) => limits.admit({ principal, family: "chat_completions", tokens })
      yield* admit(10_000)
      const refused = renderRefusal(providerA, yield* Effect.flip(admit(70_000)))
      expect(refused.problem).toMatchObject({ status: 429, code: "request_exceeds_limit" })
      expect(refused.headers).toMatchObject({
        "x-should-retry": "false",
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "499",
        "x-ratelimit-limit-tokens": "60000",
        "x-ratelimit-remaining-tokens": "50000"
      })
      expect(refused.headers["retry-after"]).toBeUndefined()
      expect(refused.headers["retry-after-ms"]).toBeUndefined()
      // Nothing was taken by the refusal.
      expect(remainingTokens(headersOf(yield* admit(0)))).toBe(50_000)
    }).pipe(Effect.provide(limitsOn(RateLimiter.memory))))

  it.effect("settles off the request path when the limiter's store is shared", () =>
    Effect.gen(function*() {
      const settled: Array<number> = []
      // A shared store whose settle never finishes: the admission must not wait for it.
      const slowStore = Layer.effect(
        RateLimiter,
        Effect.map(RateLimiter, (memory) =>
          RateLimiter.of({
            acquire: memory.acquire,
            settle: (demands) => Effect.zipRight(Effect.sync(() => settled.push(demands[0]!.amount)), Effect.never),
            settlesInPlace: false
          }))
      ).pipe(Layer.provide(RateLimiter.memory))
      const admission = yield* Effect.flatMap(RateLimits, (limits) =>
        limits.admit({ principal, family: "chat_completions", tokens: 500 })).pipe(Effect.provide(limitsOn(slowStore)))
      yield* admission.settle(100)
      yield* Effect.yieldNow()
      expect(settled).toEqual([-400])
    }))
})
