import ProviderAClient from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, startRedis } from "../support/redis"
import { call, createKey, createWorkspace, type RunningApp, startApp, useApp } from "../support/app"
import { eventually } from "../support/fakeUpstream"

const user = [{ role: "user" as const, content: "hi" }]

const limitedWorkspace = async (app: RunningApp, requestsPerMinute: number) => {
  const workspace = await createWorkspace(app, "limited", {
    rateLimits: { families: { chat_completions: { requestsPerMinute } } }
  })
  const { key } = await createKey(app, workspace.id, ["COMPLETION_API", "USAGE_EXPORT_API"])
  return { workspace, key }
}

const chat = (app: RunningApp, key: string, body: Record<string, unknown> = {}) =>
  fetch(`${app.url}/provider_a/eu/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "chatgen-4o", messages: user, ...body })
  })

describe("rate limits on one instance", () => {
  // The buckets are in memory on one instance: nothing here needs PostgreSQL.
  const app = useApp()

  /** The tokens a small request finds left, asked until a settlement of thousands shows in them (or the wait ends). */
  const remainingOnceSettled = (key: string) =>
    eventually(async () => {
      const answer = await chat(app.current, key, { max_tokens: 10 })
      await answer.text()
      return Number(answer.headers.get("x-ratelimit-remaining-tokens"))
    }, (remaining) => remaining > 58_000, 5_000)

  it("admit exactly the limit from a concurrent burst, per workspace, with the headers clients read", async () => {
    // A limit of 10 a minute refills one request every 6 s: the burst is over long before.
    const { key } = await limitedWorkspace(app.current, 10)
    const other = await limitedWorkspace(app.current, 10)
    const answers = await Promise.all(Array.from({ length: 20 }, () => chat(app.current, key)))
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(10)
    expect(statuses.filter((s) => s === 429)).toHaveLength(10)

    const admitted = answers.find((a) => a.status === 200)!
    expect(admitted.headers.get("x-ratelimit-limit-requests")).toBe("10")
    expect(Number(admitted.headers.get("x-ratelimit-remaining-requests"))).toBeLessThan(10)
    expect(admitted.headers.get("x-ratelimit-limit-tokens")).toBe("60000")
    expect(admitted.headers.get("x-ratelimit-reset-requests")).toMatch(/^\d+(\.\d+)?m?s$|^\d+m\d+(\.\d+)?s$/)

    const refused = answers.find((a) => a.status === 429)!
    const body = (await refused.json()) as { error: { type: string; code: string; message: string } }
    expect(body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(Number(refused.headers.get("retry-after-ms"))).toBeGreaterThan(0)
    expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0")

    // Another workspace's budget is its own.
    expect((await chat(app.current, other.key)).status).toBe(200)
  })

  it("lets a client that waits retry-after-ms succeed, and the library's own retry recover", async () => {
    // 30 a minute: one request back every 2 s.
    const { key } = await limitedWorkspace(app.current, 30)
    const exhaust = async () => {
      for (let i = 0; i < 60; i++) {
        const answer = await chat(app.current, key)
        if (answer.status === 429) return answer
      }
      throw new Error("the limit never refused")
    }
    await Promise.all(Array.from({ length: 30 }, () => chat(app.current, key)))
    const refused = await exhaust()
    await new Promise((resolve) => setTimeout(resolve, Number(refused.headers.get("retry-after-ms"))))
    expect((await chat(app.current, key)).status).toBe(200)

    await exhaust()
    const retrying = new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 2 })
    const { data, response } = await retrying.chat.completions.create({ model: "chatgen-4o", messages: user }).withResponse()
    expect(data.object).toBe("chat.completion")
    expect(response.status).toBe(200)
  })

  it("refuses at once a request whose estimate alone exceeds the limit, and tells the library not to retry", async () => {
    // A low token limit, so that a max_tokens the model can write still exceeds it.
    const workspace = await createWorkspace(app.current, "small tokens", {
      rateLimits: { families: { chat_completions: { tokensPerMinute: 10_000 } } }
    })
    const { key } = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    const answer = await chat(app.current, key, { max_tokens: 15_000 })
    expect(answer.status).toBe(429)
    expect(answer.headers.get("x-should-retry")).toBe("false")
    // The limit headers every 429 carries, but no retry-after: waiting would not help.
    expect(answer.headers.get("x-ratelimit-limit-tokens")).toBe("10000")
    expect(answer.headers.get("x-ratelimit-remaining-tokens")).toBe("10000")
    expect(answer.headers.get("x-ratelimit-limit-requests")).toBe("500")
    expect(answer.headers.get("x-ratelimit-reset-requests")).toBe("0ms")
    expect(answer.headers.get("retry-after")).toBeNull()
    expect(answer.headers.get("retry-after-ms")).toBeNull()
    const body = (await answer.json()) as { error: { message: string } }
    expect(body.error.message).toContain("more than the limit of 10000 tokens per minute")
  })

  it("refuses output beyond the model's limit as a 400 naming the field, not as a 429", async () => {
    const { key } = await limitedWorkspace(app.current, 500)
    for (const field of ["max_tokens", "max_completion_tokens"]) {
      const answer = await chat(app.current, key, { [field]: 70_000 })
      expect(answer.status).toBe(400)
      const body = (await answer.json()) as { error: { type: string; code: string; param: string; message: string } }
      expect(body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_value", param: field })
      expect(body.error.message).toBe(
        `${field} is too large: 70000. This model supports at most 16384 completion tokens, whereas you provided 70000.`
      )
    }
    // The messages endpoint makes the same check, in its own words.
    const messages = await fetch(`${app.current.url}/provider_b/eu/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 70_000, messages: user })
    })
    expect(messages.status).toBe(400)
    expect(await messages.json()).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringContaining("max_tokens: 70000 > 64000") }
    })
  })

  it("reserves the tool and function definitions as prompt tokens too", async () => {
    const parameters = {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => [`field_${i}`, { type: "string", description: `The value number ${i} the caller passes on.` }])
      )
    }
    // What a fresh workspace has left while the request is in flight: the limit less the reservation.
    const reserved = async (body: Record<string, unknown>) => {
      const { key } = await limitedWorkspace(app.current, 500)
      const answer = await chat(app.current, key, { max_tokens: 10, ...body })
      expect(answer.status).toBe(200)
      await answer.text()
      return 60_000 - Number(answer.headers.get("x-ratelimit-remaining-tokens"))
    }
    const plain = await reserved({})
    const withTools = await reserved({ tools: [{ type: "function", function: { name: "lookup", parameters } }] })
    const withFunctions = await reserved({ functions: [{ name: "lookup", parameters }] })
    expect(withTools - plain).toBeGreaterThan(400)
    expect(withFunctions - plain).toBeGreaterThan(400)
  })

  it("reserves tokens before forwarding and settles them to the real use afterwards", async () => {
    const { key } = await limitedWorkspace(app.current, 500)
    const first = await chat(app.current, key, { max_tokens: 5_000 })
    const { usage } = (await first.json()) as { usage: { total_tokens: number } }
    // While in flight the whole reservation counted; afterwards only the real use does.
    expect(Number(first.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThanOrEqual(60_000 - 5_000)
    // The settlement happens in the background, just after the answer: asked until it shows.
    // Unsettled, the 5,000 reserved would still be missing (about 55,000 left); settled, only the real use is.
    const remaining = await remainingOnceSettled(key)
    expect(usage.total_tokens).toBeLessThan(1_000)
    expect(remaining).toBeGreaterThan(58_000)
    expect(remaining).toBeLessThan(60_000)
  })

  it("limits each model on its own: a full model leaves the family's other models and embeddings admitted", async () => {
    const workspace = await createWorkspace(app.current, "per model", {
      rateLimits: { models: { "chatgen-4o": { requestsPerMinute: 2 } } }
    })
    const { key } = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    const first = await chat(app.current, key)
    expect(first.status).toBe(200)
    // The headers report the tightest bucket: the model's, not the family's 500.
    expect(first.headers.get("x-ratelimit-limit-requests")).toBe("2")
    expect((await chat(app.current, key)).status).toBe(200)
    const refused = await chat(app.current, key)
    expect(refused.status).toBe(429)
    const body = (await refused.json()) as { error: { code: string; message: string } }
    expect(body.error.code).toBe("rate_limit_exceeded")
    expect(body.error.message).toContain("model chatgen-4o")
    expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0")

    // Same family, another model: its own bucket, and the family's has plenty left.
    const sibling = await chat(app.current, key, { model: "chatgen-4o-mini" })
    expect(sibling.status).toBe(200)
    expect(sibling.headers.get("x-ratelimit-limit-requests")).toBe("500")
    // Three taken from the family's bucket (the refusal took nothing), less what refilled meanwhile.
    expect(Number(sibling.headers.get("x-ratelimit-remaining-requests"))).toBeGreaterThanOrEqual(497)
    expect(Number(sibling.headers.get("x-ratelimit-remaining-requests"))).toBeLessThan(500)
    const embeddings = await fetch(`${app.current.url}/provider_a/eu/v1/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "text-embedding-ada-002", input: "hello" })
    })
    expect(embeddings.status).toBe(200)
    expect(embeddings.headers.get("x-ratelimit-remaining-requests")).toBe("499")
  })

  it("reconciles a stream's reservation to the usage it reports", async () => {
    const { key } = await limitedWorkspace(app.current, 500)
    // The client does not ask for usage: the service asks the upstream for it anyway, to settle.
    const stream = await chat(app.current, key, { stream: true, max_tokens: 5_000 })
    expect(stream.status).toBe(200)
    expect(Number(stream.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThanOrEqual(60_000 - 5_000)
    const text = await stream.text()
    expect(text).not.toContain('"usage"')
    // Unsettled, the 5,000 reserved would still be missing; settled, only the few hundred used are.
    const remaining = await remainingOnceSettled(key)
    expect(remaining).toBeGreaterThan(58_000)
    expect(remaining).toBeLessThan(60_000)
  })

  it("puts the headers on streams and on usage exports too", async () => {
    const { key } = await limitedWorkspace(app.current, 500)
    const stream = await chat(app.current, key, { stream: true })
    expect(stream.headers.get("content-type")).toContain("text/event-stream")
    expect(stream.headers.get("x-ratelimit-limit-requests")).toBe("500")
    await stream.text()
    const exported = await call(app.current, "POST", "/export/users", {
      token: key,
      body: { from: { date: "2026-01-01", timezone: "UTC" }, to: { date: "2026-01-02", timezone: "UTC" } }
    })
    expect(exported.headers.get("x-ratelimit-limit-requests")).toBe("500")
    expect(exported.headers.get("x-ratelimit-remaining-requests")).toBe("499")
  })

  it("answers provider_b with the messages protocol's own header set, and provider_c with the documented one", async () => {
    const workspace = await createWorkspace(app.current, "protocols", {
      rateLimits: { families: { messages: { requestsPerMinute: 1 } } }
    })
    const { key } = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    const messages = () =>
      fetch(`${app.current.url}/provider_b/eu/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 20, messages: user })
      })
    const first = await messages()
    expect(first.status).toBe(200)
    expect(first.headers.get("anthropic-ratelimit-requests-limit")).toBe("1")
    expect(first.headers.get("anthropic-ratelimit-requests-remaining")).toBe("0")
    expect(Date.parse(first.headers.get("anthropic-ratelimit-requests-reset")!)).toBeGreaterThan(Date.now())
    expect(first.headers.get("anthropic-ratelimit-tokens-limit")).toBe("40000")
    expect(first.headers.get("x-ratelimit-limit-requests")).toBeNull()
    const refused = await messages()
    expect(refused.status).toBe(429)
    expect(await refused.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } })
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)

    const fim = await fetch(`${app.current.url}/provider_c/eu/v1/fim/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "codemodel-2501", prompt: "def add(a, b):", max_tokens: 20 })
    })
    expect(fim.status).toBe(200)
    expect(fim.headers.get("x-ratelimit-limit-requests")).toBe("300")
    expect(fim.headers.get("x-ratelimit-limit-tokens")).toBe("40000")
  })

  it("limits usage exports per workspace with 429 in the export format", async () => {
    const workspace = await createWorkspace(app.current, "exports", { rateLimits: { families: { usage_export: { requestsPerMinute: 2 } } } })
    const { key } = await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])
    const body = { from: { date: "2026-01-01", timezone: "UTC" }, to: { date: "2026-01-02", timezone: "UTC" } }
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push(await call(app.current, "POST", "/export/models", { token: key, body }))
    expect(statuses.map((s) => s.status).slice(0, 2)).not.toContain(429)
    expect(statuses[2]!.status).toBe(429)
    expect(statuses[2]!.body).toMatchObject({ success: false, error: { code: "rate_limit_exceeded" } })
    expect(Number(statuses[2]!.headers.get("retry-after"))).toBeGreaterThan(0)
  })
})

describe("rate limits across two instances sharing Redis", () => {
  let redis: RedisServer
  let open: RunningApp
  let closed: RunningApp

  beforeAll(async () => {
    redis = await startRedis()
    const shared = { RATE_LIMIT_STORE: "redis", REDIS_URL: redis.url, RATE_LIMIT_REDIS_TIMEOUT_MS: "200" }
    open = await startApp({ ...shared, RATE_LIMIT_ON_STORE_FAILURE: "open" }, { stores: "postgres" })
    closed = await startApp({ ...shared, RATE_LIMIT_ON_STORE_FAILURE: "closed", DATABASE_URL: open.env.DATABASE_URL! }, { stores: "postgres" })
  })
  afterAll(async () => {
    await open?.stop()
    await closed?.stop()
    await redis?.stop()
  })

  it("admit exactly the limit in total, never the limit per instance", async () => {
    const { key } = await limitedWorkspace(open, 10)
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(i % 2 === 0 ? open : closed, key)))
    expect(answers.filter((a) => a.status === 200)).toHaveLength(10)
    expect(answers.filter((a) => a.status === 429)).toHaveLength(20)
  })

  it("refill in the shared store: after retry-after-ms a request gets in, on either instance", async () => {
    // 30 a minute: one request back every 2 s, whichever instance took them.
    const { key } = await limitedWorkspace(open, 30)
    const burst = await Promise.all(Array.from({ length: 31 }, (_, i) => chat(i % 2 === 0 ? open : closed, key)))
    expect(burst.filter((a) => a.status === 200)).toHaveLength(30)
    const refused = burst.find((a) => a.status === 429)!
    const wait = Number(refused.headers.get("retry-after-ms"))
    expect(wait).toBeGreaterThan(0)
    expect(wait).toBeLessThanOrEqual(2_000)
    // (No "still refused" check here: how long the burst took under load decides it, not the limiter.)
    await new Promise((resolve) => setTimeout(resolve, wait + 50))
    expect((await chat(closed, key)).status).toBe(200)
  })

  it("fail open or closed while Redis is away, as configured, and recover when it is back", async () => {
    const { key } = await limitedWorkspace(open, 500)
    await redis.stop()
    expect((await chat(open, key)).status).toBe(200)
    const refused = await chat(closed, key)
    expect(refused.status).toBe(503)
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("rate_limit_unavailable")

    await redis.start()
    // The client reconnects on its own; limits apply again on both instances.
    const deadline = Date.now() + 10_000
    let status = 0
    while (Date.now() < deadline && status !== 200) {
      status = (await chat(closed, key)).status
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(status).toBe(200)
    const limited = await limitedWorkspace(open, 5)
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(i % 2 === 0 ? open : closed, limited.key)))
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5)
  })
})

