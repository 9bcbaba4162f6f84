import type * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeUpstream, startFakeUpstream, chatCompletionAnswer } from "../support/fakeUpstream"
import { createKey, createWorkspace, type RunningApp, startApp } from "../support/app"

/**
 * An upstream written to hurt the service (issue 13, defects 5–7): it echoes credentials and
 * internal addresses, sends absurd numbers, lines that never end, huge answers and trickles.
 * The behaviour is chosen by the last user message.
 */
const upstreamKey = "sk-upstream-secret-0123456789abcdef"

const timers = new Set<NodeJS.Timeout>()

const behave = (said: string, response: http.ServerResponse) => {
  const every = (ms: number, tick: () => void) => {
    const timer = setInterval(() => (response.destroyed ? clearInterval(timer) : tick()), ms)
    timers.add(timer)
    response.on("close", () => clearInterval(timer))
  }
  switch (said) {
    case "leak":
      response.writeHead(400, { "content-type": "application/json" })
      return response.end(JSON.stringify({
        error: {
          message: `Incorrect API key provided: Bearer ${upstreamKey} (via http://internal.example:8443/v1, 10.0.3.7:8443)`,
          type: "invalid_request_error",
          param: "messages",
          code: "invalid_api_key"
        }
      }))
    case "retry-huge":
      response.writeHead(429, { "content-type": "application/json", "retry-after": "999999999", "retry-after-ms": "-5" })
      return response.end(JSON.stringify({ error: { message: "slow down", type: "rate_limit_error", param: null, code: null } }))
    case "huge-usage":
      response.writeHead(200, { "content-type": "application/json" })
      return response.end(chatCompletionAnswer({ prompt_tokens: 3, completion_tokens: 1e10, total_tokens: 1e10 + 3 }))
    case "endless-line": {
      // One SSE line that never ends, as fast as the service reads it.
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write("data: ")
      const piece = Buffer.alloc(64 * 1024, "x")
      const pump = () => {
        while (!response.destroyed && response.write(piece)) {
          // until the socket's buffer is full
        }
      }
      response.on("drain", pump)
      return pump()
    }
    case "big-json": {
      // 900 KB of answer, the end held back for a while: several of these are read at once.
      response.writeHead(200, { "content-type": "application/json" })
      response.write(`{"id":"x","object":"chat.completion","created":1,"model":"chatgen-4o","pad":"${"y".repeat(900 * 1024)}`)
      const timer = setTimeout(() => response.end(`","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}`), 1_500)
      return void response.on("close", () => clearTimeout(timer))
    }
    case "too-big-json":
      response.writeHead(200, { "content-type": "application/json" })
      return response.end(`{"pad":"${"z".repeat(3 * 1024 * 1024)}"}`)
    case "trickle":
      // A byte every 300 ms: never silent long enough for the idle timeout.
      response.writeHead(200, { "content-type": "text/event-stream" })
      return every(300, () => response.write(":"))
    default:
      response.writeHead(200, { "content-type": "application/json" })
      return response.end(chatCompletionAnswer({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }))
  }
}

describe("forwarding against a hostile upstream", () => {
  let upstream: FakeUpstream
  let app: RunningApp
  let key: string

  beforeAll(async () => {
    upstream = await startFakeUpstream((request, response) => behave(request.body?.messages?.at(-1)?.content ?? "", response))
    app = await startApp({
      UPSTREAM_PROVIDER_A_EU_URL: upstream.url,
      UPSTREAM_PROVIDER_A_EU_KEY: upstreamKey,
      UPSTREAM_IDLE_TIMEOUT_MS: "2000",
      UPSTREAM_DEADLINE_MS: "4000",
      UPSTREAM_MAX_SSE_EVENT_BYTES: String(256 * 1024),
      UPSTREAM_MAX_JSON_BYTES: String(2 * 1024 * 1024),
      UPSTREAM_JSON_BUDGET_BYTES: String(2 * 1024 * 1024)
    }, { stores: "postgres" })
    const workspace = await createWorkspace(app)
    key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
  })
  afterAll(async () => {
    for (const timer of timers) clearInterval(timer)
    await app?.stop()
    await upstream?.close()
  })

  const ask = (content: string, stream = false, apiKey = key) =>
    fetch(`${app.url}/provider_a/eu/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content }], stream })
    })

  it("never relays the upstream key, its URLs or host names in an error message (defect 5)", async () => {
    const response = await ask("leak")
    expect(response.status).toBe(400)
    const text = await response.text()
    expect(text).not.toContain(upstreamKey)
    expect(text).not.toContain("internal.example")
    expect(text).not.toContain("10.0.3.7")
    expect(text).not.toContain("http://")
    // What the caller can act on stays.
    expect(JSON.parse(text).error).toMatchObject({ type: "invalid_request_error", param: "messages", code: "invalid_api_key" })
    expect(JSON.parse(text).error.message).toContain("Incorrect API key provided")
  })

  it("bounds the upstream's retry hints to 0–600 s (defect 6)", async () => {
    const response = await ask("retry-huge")
    expect(response.status).toBe(429)
    expect(response.headers.get("retry-after")).toBe("600")
    expect(response.headers.get("retry-after-ms")).toBe("0")
  })

  it("does not lock a workspace out for months over a huge reported token count (defect 6)", async () => {
    const workspace = await createWorkspace(app, "Huge usage")
    const own = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
    expect((await ask("huge-usage", false, own)).status).toBe(200)
    // The settling is off the request path: the next answers show it once it is done.
    let retryAfter = 0
    for (let i = 0; i < 20 && retryAfter === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      const next = await ask("hello", false, own)
      await next.text()
      retryAfter = Number(next.headers.get("retry-after") ?? 0)
    }
    // At most the model's context is settled: minutes at the default 60,000 tokens a minute, not 116 days.
    expect(retryAfter).toBeLessThanOrEqual(600)
  })

  it("cuts a stream whose line never ends instead of buffering it (defect 7)", async () => {
    const before = process.memoryUsage().rss
    const response = await ask("endless-line", true)
    expect(response.status).toBe(200)
    const text = await response.text().catch((cause: unknown) => `cut: ${String(cause)}`)
    expect(text).not.toContain("xxxx")
    // Generous: without the bound this grows by hundreds of megabytes a second until the deadline.
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024)
  })

  it("refuses a JSON answer over the cap, and answers beyond the shared budget with 503 (defect 7)", async () => {
    expect((await ask("too-big-json")).status).toBe(502)
    const answers = await Promise.all(Array.from({ length: 5 }, () => ask("big-json")))
    const statuses = answers.map((response) => response.status)
    await Promise.all(answers.map((response) => response.text()))
    expect(statuses).toContain(503)
    const busy = answers[statuses.indexOf(503)]!
    expect(Number(busy.headers.get("retry-after"))).toBeGreaterThan(0)
    // Once the others are done, the budget is whole again.
    expect((await ask("big-json")).status).toBe(200)
  })

  it("ends an exchange that trickles a byte at a time at the total deadline (defect 7)", async () => {
    const started = Date.now()
    const response = await ask("trickle", true)
    const text = await response.text().catch((cause: unknown) => `cut: ${String(cause)}`)
    // The deadline is 4 s; without it the request is held for as long as the upstream trickles.
    expect(Date.now() - started).toBeLessThan(30_000)
    expect(text).not.toContain("[DONE]")
  }, 40_000)
})
