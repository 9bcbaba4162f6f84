import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeUpstream, startFakeUpstream, chatCompletionAnswer } from "../support/fakeUpstream"
import { call, createKey, createWorkspace, type RunningApp, startApp } from "../support/app"

/**
 * Cheap bounds before expensive work (issue 13, defect 10): a body of 200,000 messages is refused
 * on its count, before it is decoded, tokenized or forwarded; refusals spend the workspace's
 * request budget like any other request.
 */
describe("cheap bounds before expensive work", () => {
  let upstream: FakeUpstream
  let app: RunningApp
  let key: string

  beforeAll(async () => {
    upstream = await startFakeUpstream((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" })
      response.end(chatCompletionAnswer())
    })
    app = await startApp({ UPSTREAM_PROVIDER_A_EU_URL: upstream.url, UPSTREAM_PROVIDER_A_EU_KEY: "k" })
    const workspace = await createWorkspace(app, "Big", {
      rateLimits: { families: { chat_completions: { requestsPerMinute: 10_000, tokensPerMinute: 100_000_000 } } }
    })
    key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
  })
  afterAll(async () => {
    await app?.stop()
    await upstream?.close()
  })

  const messages = Array.from({ length: 200_000 }, (_, i) => ({ role: "user", content: `hello there ${i}` }))

  it("refuses 200,000 messages on their count, before decoding, counting or forwarding them", async () => {
    const seen = upstream.seen.length
    const answer = await call(app, "POST", "/provider_a/eu/v1/chat/completions", { token: key, body: { model: "chatgen-4o", messages } })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: "context_length_exceeded", param: "messages" })
    expect(upstream.seen.length).toBe(seen)
  })

  it("judges the count against the model's own context", async () => {
    // 50,000 short messages: under the largest model's context, over chatgen-4o's 128,000 tokens.
    const many = Array.from({ length: 50_000 }, () => ({ role: "user", content: "x" }))
    const answer = await call(app, "POST", "/provider_a/eu/v1/chat/completions", { token: key, body: { model: "chatgen-4o", messages: many } })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: "context_length_exceeded", param: "messages" })
    expect(answer.body.error.message).toContain("128000")
  })

  it("refuses the same on the messages endpoint", async () => {
    const answer = await call(app, "POST", "/provider_b/eu/v1/messages", {
      token: key,
      body: { model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 5, messages }
    })
    expect(answer.status).toBe(400)
    expect(answer.body.error.message).toMatch(/^messages: /)
    expect(answer.body.error.type).toBe("invalid_request_error")
  })

  it("refuses an embeddings input over the limit without counting all of it", async () => {
    const answer = await call(app, "POST", "/provider_a/eu/v1/embeddings", {
      token: key,
      body: { model: "text-embedding-ada-002", input: "word ".repeat(1_000_000) }
    })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: "context_length_exceeded", param: "input" })
  })

  it("charges refused requests to the workspace's request budget", async () => {
    const workspace = await createWorkspace(app, "Small", {
      rateLimits: { families: { chat_completions: { requestsPerMinute: 3, tokensPerMinute: 100_000 } } }
    })
    const own = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
    const ask = (temperature: number) =>
      call(app, "POST", "/provider_a/eu/v1/chat/completions", {
        token: own,
        body: { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], temperature }
      })
    for (let i = 0; i < 3; i++) expect((await ask(7)).status).toBe(400)
    const next = await ask(1)
    expect(next.status).toBe(429)
    expect(Number(next.headers.get("retry-after"))).toBeGreaterThan(0)
  })
})
