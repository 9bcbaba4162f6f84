import ProviderAClient from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database"
import { eventually, type FakeUpstream, startFakeUpstream, chatCompletionAnswer } from "../support/fakeUpstream"
import { createKey, createWorkspace, type RunningApp, startApp } from "../support/app"

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "chatgen-4o", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`

/**
 * The upstream's behaviour is chosen by the last user message: "hang" (no headers), "stall"
 * (two events, then silence), "truncated" (two events, then a clean close without [DONE]), "slow"
 * (an event every 50 ms, for a long time), "reject" (a 400 of
 * the provider's own), "forbid" (401: the service's credentials), else a short complete answer.
 */
const behave = (body: any, response: import("node:http").ServerResponse) => {
  const said: string = body?.messages?.at(-1)?.content ?? ""
  if (said === "hang") return
  if (said === "reject" || said === "forbid") {
    response.writeHead(said === "reject" ? 400 : 401, { "content-type": "application/json" })
    response.end(JSON.stringify({ error: { message: "messages[0] is not acceptable upstream", type: "invalid_request_error", param: "messages", code: null } }))
    return
  }
  if (body?.stream) {
    response.writeHead(200, { "content-type": "text/event-stream" })
    if (said === "stall" || said === "truncated") {
      response.write(chunk("a"))
      response.write(chunk("b"))
      if (said === "truncated") response.end()
      return
    }
    if (said === "slow") {
      let sent = 0
      const timer = setInterval(() => {
        if (response.destroyed || sent++ > 400) return void clearInterval(timer)
        response.write(chunk("word "))
      }, 50)
      response.on("close", () => clearInterval(timer))
      return
    }
    response.write(chunk("done"))
    response.end("data: [DONE]\n\n")
    return
  }
  // Its own account's limits, as real providers send on every answer: not the workspace's.
  response.writeHead(200, { "content-type": "application/json", "x-ratelimit-limit-requests": "30000", "x-ratelimit-remaining-tokens": "149999000" })
  response.end(chatCompletionAnswer())
}

describe("forwarding against a misbehaving upstream", () => {
  let upstream: FakeUpstream
  let app: RunningApp
  let client: ProviderAClient
  let key: string
  let workspaceId: string

  beforeAll(async () => {
    upstream = await startFakeUpstream((request, response) => behave(request.body, response))
    app = await startApp({
      UPSTREAM_PROVIDER_A_EU_URL: upstream.url,
      UPSTREAM_PROVIDER_A_EU_KEY: "upstream-secret",
      UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "400",
      UPSTREAM_IDLE_TIMEOUT_MS: "400",
      // Nothing listens there: connections are refused.
      UPSTREAM_PROVIDER_A_US_URL: "http://127.0.0.1:9",
      UPSTREAM_PROVIDER_A_US_KEY: "x"
    }, { stores: "postgres" })
    const workspace = await createWorkspace(app)
    workspaceId = workspace.id
    key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
    client = new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 })
  })
  afterAll(async () => {
    await app?.stop()
    await upstream?.close()
  })

  const ask = (content: string, stream = false) =>
    fetch(`${app.url}/provider_a/eu/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-stainless-lang": "js", cookie: "a=b" },
      body: JSON.stringify({
        model: "chatgen-4o",
        messages: [{ role: "user", content }],
        stream,
        n: 2,
        service_tier: "flex",
        parallel_tool_calls: true,
        stream_options: { include_usage: false }
      })
    })

  it("sends the service's credentials and the validated body, never the caller's key or headers", async () => {
    const answer = await ask("hello")
    expect(answer.status).toBe(200)
    const seen = upstream.seen.at(-1)!
    expect(seen.path).toBe("/v1/chat/completions")
    expect(seen.headers.authorization).toBe("Bearer upstream-secret")
    expect(JSON.stringify(seen.headers)).not.toContain(key)
    expect(seen.headers["x-stainless-lang"]).toBeUndefined()
    expect(seen.headers.cookie).toBeUndefined()
    expect(seen.body).toEqual({ model: "chatgen-4o", messages: [{ role: "user", content: "hello" }], stream: false })

    // The workspace's limits (500 requests a minute by default), never the upstream account's.
    expect(answer.headers.get("x-ratelimit-limit-requests")).toBe("500")
    expect(Number(answer.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(1_000_000)

    await (await ask("hello", true)).text()
    expect(upstream.seen.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
    expect(upstream.seen.at(-1)!.body.n).toBeUndefined()
  })

  it("passes the upstream's own 4xx through in the endpoint's format, and its refusal of our credentials as 502", async () => {
    const rejected = await ask("reject")
    expect(rejected.status).toBe(400)
    expect(await rejected.json()).toEqual({
      error: { message: "messages[0] is not acceptable upstream", type: "invalid_request_error", param: "messages", code: "invalid_request_error" }
    })
    const forbidden = await ask("forbid")
    expect(forbidden.status).toBe(502)
    const body = await forbidden.text()
    expect(body).not.toContain("upstream-secret")
    expect(body).not.toContain(upstream.url)
  })

  it("answers 504 when the upstream sends no headers in time, and 502 when it cannot be reached", async () => {
    const timedOut = await client.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "hang" }] })
      .catch((e: unknown) => e)
    expect((timedOut as InstanceType<typeof ProviderAClient.APIError>).status).toBe(504)
    const refused = new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/us/v1`, maxRetries: 0 })
    const unreachable = await refused.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e)
    expect((unreachable as InstanceType<typeof ProviderAClient.APIError>).status).toBe(502)
    expect((unreachable as Error).message).not.toContain("127.0.0.1")
  })

  it("cuts a stream that goes silent: the in-band error arrives, then the connection breaks", async () => {
    const response = await ask("stall", true)
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    let text = ""
    const ending = await (async () => {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return "clean end"
        text += new TextDecoder().decode(value)
      }
    })().catch((e: unknown) => e)
    expect(ending).toBeInstanceOf(Error)
    expect(text).toContain('"content":"b"')
    expect(text).toContain('"error":{"message":"The upstream provider did not answer in time."')
    expect(text).not.toContain("[DONE]")
  })

  it("does not pass a stream that closes before [DONE] off as complete: the client library sees an error", async () => {
    const stream = await client.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "truncated" }], stream: true })
    const received: Array<string> = []
    const ending = await (async () => {
      for await (const part of stream) received.push(part.choices[0]?.delta.content ?? "")
      return "clean end"
    })().catch((e: unknown) => e)
    expect(ending).toBeInstanceOf(Error)
    expect(received).toEqual(["a", "b"])
    const rows = await eventually(
      () => query<{ outcome: string; status: number }>(app.env.DATABASE_URL!, "SELECT outcome, status FROM api_requests WHERE workspace_id = $1 AND outcome = 'failed' AND stream", [workspaceId]),
      (r) => r.length > 0
    )
    expect(rows[0]!.status).toBe(200)
  })

  it("aborts the upstream request as soon as the client breaks out of the stream, and records the cancellation", async () => {
    const before = upstream.closedEarly()
    const stream = await client.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "slow" }], stream: true })
    let received = 0
    for await (const _chunk of stream) {
      if (++received === 3) break
    }
    await eventually(() => upstream.closedEarly(), (closed) => closed === before + 1, 2_000)
    const rows = await eventually(
      () => query<{ outcome: string; output_tokens: number; status: number }>(app.env.DATABASE_URL!, "SELECT outcome, output_tokens, status FROM api_requests WHERE workspace_id = $1 AND outcome = 'cancelled'", [workspaceId]),
      (r) => r.length > 0
    )
    // What was generated until then is billed: at least the three "word " chunks read.
    expect(rows[0]!.output_tokens).toBeGreaterThanOrEqual(3)
  })
})

describe("a client that leaves before the upstream has answered", () => {
  let upstream: FakeUpstream
  let app: RunningApp
  let key: string

  beforeAll(async () => {
    upstream = await startFakeUpstream((request, response) => behave(request.body, response))
    // A first-byte timeout far beyond the test: only the client leaving can end the upstream request.
    app = await startApp({ UPSTREAM_PROVIDER_A_EU_URL: upstream.url, UPSTREAM_PROVIDER_A_EU_KEY: "upstream-secret", UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "30000" }, { stores: "postgres" })
    const workspace = await createWorkspace(app)
    key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
  })
  afterAll(async () => {
    await app?.stop()
    await upstream?.close()
  })

  it("aborts the upstream request at once", async () => {
    const leaving = new AbortController()
    const pending = fetch(`${app.url}/provider_a/eu/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "hang" }] }),
      signal: leaving.signal
    }).catch((e: unknown) => e)
    await eventually(() => upstream.seen.length, (n) => n > 0, 5_000)
    leaving.abort()
    expect(await pending).toBeInstanceOf(Error)
    await eventually(() => upstream.closedEarly(), (closed) => closed === 1, 5_000)
  })
})
