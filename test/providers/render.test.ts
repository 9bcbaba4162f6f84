import { describe, expect, it } from "vitest"
import { upstreamIds } from "../../src/config"
import {
  LimitsUnavailable,
  ModelNotFound,
  ModelNotSupported,
  RateLimited,
  RegionNotServed,
  UpstreamRefused,
  UpstreamUnavailable,
  wasAdmitted
} from "../../src/domain/refusals"
import { providers } from "../../src/providers/provider"
import { providerA } from "../../src/providers/providerA/dialect"
import { providerB } from "../../src/providers/providerB/dialect"
import { providerC } from "../../src/providers/providerC/dialect"
import { messagesRateLimitHeaders } from "../../src/providers/rateLimitHeaders"
import { exportsStyle, renderRefusal } from "../../src/providers/render"

const readings = {
  requests: { limit: 500, remaining: 0, resetMs: 1_500 },
  tokens: { limit: 60_000, remaining: 1_200.7, resetMs: 90_000 },
  at: Date.parse("2026-11-24T10:00:00.000Z")
}

describe("the providers' records", () => {
  it("are one per id, and name the upstreams (UPSTREAM_<ID>_URL) by provider and region", () => {
    expect(new Set(providers.map((provider) => provider.id)).size).toBe(providers.length)
    expect(upstreamIds).toEqual(["provider_a_eu", "provider_a_us", "provider_b_eu", "provider_b_us", "provider_c_eu"])
  })
})

describe("rendering a refusal", () => {
  it("words the same refusal in each provider's own terms", () => {
    const region = new RegionNotServed({ region: "mars" })
    expect(renderRefusal(providerA, region).problem.message).toBe("Region 'mars' does not exist. Use eu or us.")
    expect(renderRefusal(providerC, region).problem.message).toBe("Region 'mars' does not exist. FIM completion is served in eu only.")
    const model = new ModelNotFound({ model: "chatgen-x" })
    expect(renderRefusal(providerA, model).problem).toEqual({
      status: 404,
      code: "model_not_found",
      message: "The model 'chatgen-x' does not exist or you do not have access to it.",
      param: "model"
    })
    expect(renderRefusal(providerB, model).problem.message).toBe("model: chatgen-x does not exist or you do not have access to it.")
  })

  it("ends an unknown model's refusal, in every wording, with where the workspace's models are listed", () => {
    const modelsPath = "/api/public/provider_b/us/v1/models"
    const model = new ModelNotFound({ model: "chatgen-x", modelsPath })
    expect(renderRefusal(providerA, model).problem).toEqual({
      status: 404,
      code: "model_not_found",
      message: `The model 'chatgen-x' does not exist or you do not have access to it. The models this workspace may use are listed at GET ${modelsPath}.`,
      param: "model"
    })
    expect(renderRefusal(providerB, model).problem.message).toBe(
      `model: chatgen-x does not exist or you do not have access to it. The models this workspace may use are listed at GET ${modelsPath}.`
    )
    const unsupported = new ModelNotSupported({ model: "codemodel-x", supported: "codemodel-2501", modelsPath })
    expect(renderRefusal(providerC, unsupported).problem.message).toBe(
      `Invalid model: codemodel-x. FIM completion supports codemodel-2501 only. The models this workspace may use are listed at GET ${modelsPath}.`
    )
  })

  it("puts each provider's rate-limit headers and both retry hints on a 429", () => {
    const limited = new RateLimited({ readings, retryAfterMs: 1_500, family: "chat_completions" })
    const a = renderRefusal(providerA, limited)
    expect(a.problem).toMatchObject({ status: 429, code: "rate_limit_exceeded" })
    expect(a.problem.message).toBe("Rate limit reached for chat completion requests of this workspace. Retry in 2 s, or ask for a higher limit.")
    expect(a.headers).toEqual({
      "x-ratelimit-limit-requests": "500",
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "1.5s",
      "x-ratelimit-limit-tokens": "60000",
      "x-ratelimit-remaining-tokens": "1200",
      "x-ratelimit-reset-tokens": "1m30s",
      "retry-after": "2",
      "retry-after-ms": "1500"
    })
    expect(renderRefusal(providerB, limited).headers).toMatchObject({
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": "2026-11-24T10:00:01Z",
      "anthropic-ratelimit-tokens-reset": "2026-11-24T10:01:30Z",
      "retry-after": "2"
    })
    expect(renderRefusal(exportsStyle, limited).headers).toEqual(a.headers)
    expect(renderRefusal(providerA, new LimitsUnavailable()).problem.status).toBe(503)
  })

  it("passes the upstream's own refusal through, with the admission's limits and the upstream's hints", () => {
    const answer = { status: 400, code: "invalid_request_error", message: "max_tokens: too big" }
    const rendered = renderRefusal(providerB, new UpstreamRefused({ answer, readings, hints: { "retry-after": "3" } }))
    expect(rendered.problem).toBe(answer)
    expect(rendered.headers).toMatchObject({ "anthropic-ratelimit-requests-limit": "500", "retry-after": "3" })
    expect(renderRefusal(providerA, new UpstreamUnavailable({ reason: "timeout", readings: undefined, hints: {} }))).toEqual({
      problem: { status: 504, code: "upstream_timeout", message: "The upstream provider did not answer in time." },
      headers: {}
    })
  })

  it("tells the refusals that went through the rate limits from those that did not", () => {
    expect(wasAdmitted(new ModelNotFound({ model: "x" }))).toBe(false)
    expect(wasAdmitted(new RateLimited({ readings, retryAfterMs: 1, family: "messages" }))).toBe(true)
    expect(wasAdmitted(new UpstreamUnavailable({ reason: "busy", readings: undefined, hints: {} }))).toBe(true)
  })
})

describe("the messages limit headers", () => {
  it("write each reset as the instant to the second, also when a second's text is reused or its slot taken", () => {
    const expected = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")
    const start = Date.UTC(2026, 10, 24, 10, 0, 0)
    for (let i = 0; i < 5_000; i++) {
      const at = start + i * 37
      const requests = { limit: 500, remaining: 499, resetMs: (i * 7919) % 120_000 }
      const tokens = { limit: 60_000, remaining: 1_200.5, resetMs: (i * 104_729) % 3_600_000 }
      const headers = messagesRateLimitHeaders({ at, requests, tokens })
      expect(headers["anthropic-ratelimit-requests-reset"]).toBe(expected(at + requests.resetMs))
      expect(headers["anthropic-ratelimit-tokens-reset"]).toBe(expected(at + tokens.resetMs))
    }
  })
})
