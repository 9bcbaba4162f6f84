import ProviderBClient from "@anthropic-ai/sdk"
import type { ServerResponse } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database"
import { eventually, type FakeUpstream, startFakeUpstream } from "../support/fakeUpstream"
import { createKey, createWorkspace, type RunningApp, startApp } from "../support/app"

const model = "assistantmodel-sonnet-4-5-20250929"

const event = (name: string, data: Record<string, unknown>) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`
const messageStart = event("message_start", {
  message: { id: "msg_1", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } }
})
const blockStart = event("content_block_start", { index: 0, content_block: { type: "text", text: "" } })
const textDelta = (text: string) => event("content_block_delta", { index: 0, delta: { type: "text_delta", text } })
const upstreamError = (type: string, message: string) => JSON.stringify({ type: "error", error: { type, message }, request_id: "req_up" })

/**
 * The upstream's behaviour is chosen by the last user message: "hang" (no headers), "stall" (two
 * events, then silence), "slow" (a delta every 50 ms, for a long time), "in-band" (its own
 * overloaded error event after a delta, then a clean close), "truncated" (a delta, then a clean close
 * without message_stop), "reject" (a 400 of its own),
 * "forbid" (401: the service's credentials), "overloaded" (529 with a retry hint), "garbage" (a
 * 200 that is no Message), else a short complete answer.
 */
const behave = (body: any, response: ServerResponse) => {
  const said: string = body?.messages?.at(-1)?.content ?? ""
  if (said === "hang") return
  const refuse = (status: number, type: string, message: string, headers: Record<string, string> = {}) => {
    response.writeHead(status, { "content-type": "application/json", ...headers })
    response.end(upstreamError(type, message))
  }
  if (said === "reject") return refuse(400, "invalid_request_error", "messages.0.content: upstream finds this unacceptable")
  if (said === "forbid") return refuse(401, "authentication_error", "invalid x-api-key")
  if (said === "overloaded") return refuse(529, "overloaded_error", "Overloaded", { "retry-after": "7" })
  if (said === "garbage") {
    response.writeHead(200, { "content-type": "application/json" })
    return void response.end(JSON.stringify({ hello: "world" }))
  }
  if (body?.stream) {
    response.writeHead(200, { "content-type": "text/event-stream" })
    if (said === "stall") {
      response.write(messageStart)
      response.write(blockStart)
      return
    }
    if (said === "truncated") return void response.end(messageStart + blockStart + textDelta("Hel"))
    if (said === "in-band") {
      response.write(messageStart + blockStart + textDelta("Hel"))
      response.end(event("error", { error: { type: "overloaded_error", message: "Overloaded (upstream, mid-stream)" } }))
      return
    }
    if (said === "slow") {
      response.write(messageStart + blockStart)
      let sent = 0
      const timer = setInterval(() => {
        if (response.destroyed || sent++ > 400) return void clearInterval(timer)
        response.write(textDelta("word "))
      }, 50)
      response.on("close", () => clearInterval(timer))
      return
    }
    response.end(
      messageStart + event("ping", {}) + blockStart + textDelta("done") + event("content_block_stop", { index: 0 }) +
        event("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } }) +
        event("message_stop", {})
    )
    return
  }
  response.writeHead(200, { "content-type": "application/json" })
  response.end(JSON.stringify({
    id: "msg_1",
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text: "ok" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 1 }
  }))
}

/** Reads a raw body to its end: the text, and whether it ended cleanly or broke. */
const readRaw = async (response: Response) => {
  const reader = response.body!.getReader()
  let text = ""
  const ending = await (async () => {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return "clean end"
      text += new TextDecoder().decode(value)
    }
  })().catch((e: unknown) => e)
  return { text, ending }
}

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)
type ApiError = InstanceType<typeof ProviderBClient.APIError>

describe("messages forwarding against a misbehaving upstream", () => {
  let upstream: FakeUpstream
  let app: RunningApp
  let client: ProviderBClient
  let key: string
  let workspaceId: string

  beforeAll(async () => {
    upstream = await startFakeUpstream((request, response) => behave(request.body, response))
    app = await startApp({
      UPSTREAM_PROVIDER_B_EU_URL: upstream.url,
      UPSTREAM_PROVIDER_B_EU_KEY: "upstream-secret",
      UPSTREAM_MESSAGES_VERSION: "2023-01-01",
      UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "400",
      UPSTREAM_IDLE_TIMEOUT_MS: "400",
      // Nothing listens there: connections are refused.
      UPSTREAM_PROVIDER_B_US_URL: "http://127.0.0.1:9",
      UPSTREAM_PROVIDER_B_US_KEY: "x"
    }, { stores: "postgres" })
    const workspace = await createWorkspace(app)
    workspaceId = workspace.id
    key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
    client = new ProviderBClient({
      apiKey: key,
      baseURL: `${app.url}/provider_b/eu`,
      maxRetries: 0,
      defaultHeaders: { "anthropic-beta": "some-beta-2099-01-01", cookie: "a=b" }
    })
  })
  afterAll(async () => {
    await app?.stop()
    await upstream?.close()
  })

  const ask = (content: string) => client.messages.create({ model, max_tokens: 50, messages: [{ role: "user", content }] })
  const askStream = (content: string) =>
    client.messages.create({ model, max_tokens: 50, messages: [{ role: "user", content }], stream: true }).asResponse()

  it("sends the service's key and configured version with the validated body, never the caller's key or headers", async () => {
    await ask("hello")
    const seen = upstream.seen.at(-1)!
    expect(seen.path).toBe("/v1/messages")
    expect(seen.headers["x-api-key"]).toBe("upstream-secret")
    expect(seen.headers["anthropic-version"]).toBe("2023-01-01")
    // The caller's beta header turns on features its body may use: it is the one header passed on.
    expect(seen.headers["anthropic-beta"]).toBe("some-beta-2099-01-01")
    expect(seen.headers.authorization).toBeUndefined()
    expect(JSON.stringify(seen.headers)).not.toContain(key)
    expect(seen.headers["x-stainless-lang"]).toBeUndefined()
    expect(seen.headers.cookie).toBeUndefined()
    expect(seen.body).toEqual({ model, max_tokens: 50, messages: [{ role: "user", content: "hello" }] })
  })

  it("refuses a malformed beta header with 400 naming it, before anything goes upstream", async () => {
    const before = upstream.seen.length
    const response = await fetch(`${app.url}/provider_b/eu/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "anthropic-beta": "feature one; drop table" },
      body: JSON.stringify({ model, max_tokens: 50, messages: [{ role: "user", content: "hello" }] })
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "anthropic-beta: expected a comma-separated list of beta feature names." }
    })
    expect(upstream.seen.length).toBe(before)
    const several = await client.messages.create(
      { model, max_tokens: 50, messages: [{ role: "user", content: "hello" }] },
      { headers: { "anthropic-beta": "feature-a-2025-01-01, feature-b-2025-02-02" } }
    )
    expect(several.type).toBe("message")
    expect(upstream.seen.at(-1)!.headers["anthropic-beta"]).toBe("feature-a-2025-01-01, feature-b-2025-02-02")
  })

  it("passes the upstream's own 4xx through in the messages format, and its refusal of our key as 502", async () => {
    const rejected = await failureOf(ask("reject"))
    expect(rejected).toBeInstanceOf(ProviderBClient.BadRequestError)
    expect((rejected as ApiError).type).toBe("invalid_request_error")
    expect((rejected as ApiError).apiMessage).toBe("messages.0.content: upstream finds this unacceptable")
    const forbidden = await failureOf(ask("forbid"))
    expect(forbidden).toBeInstanceOf(ProviderBClient.InternalServerError)
    expect((forbidden as ApiError).status).toBe(502)
    expect((forbidden as ApiError).type).toBe("api_error")
    expect((forbidden as Error).message).not.toContain("upstream-secret")
    expect((forbidden as Error).message).not.toContain(upstream.url)
  })

  it("passes the protocol's 529 overloaded through with its retry hint, and refuses a 200 that is no Message with 502", async () => {
    const overloaded = await failureOf(ask("overloaded"))
    expect(overloaded).toBeInstanceOf(ProviderBClient.OverloadedError)
    expect((overloaded as ApiError).type).toBe("overloaded_error")
    expect((overloaded as ApiError).headers?.get("retry-after")).toBe("7")
    const garbage = await failureOf(ask("garbage"))
    expect((garbage as ApiError).status).toBe(502)
  })

  it("answers 504 timeout_error when the upstream sends no headers in time, and 502 when it cannot be reached", async () => {
    const timedOut = await failureOf(ask("hang"))
    expect((timedOut as ApiError).status).toBe(504)
    expect((timedOut as ApiError).type).toBe("timeout_error")
    const refused = new ProviderBClient({ apiKey: key, baseURL: `${app.url}/provider_b/us`, maxRetries: 0 })
    const unreachable = await failureOf(refused.messages.create({ model, max_tokens: 10, messages: [{ role: "user", content: "hi" }] }))
    expect((unreachable as ApiError).status).toBe(502)
    expect((unreachable as Error).message).not.toContain("127.0.0.1")
  })

  it("relays a complete stream event by event, each with its event: line", async () => {
    const { ending, text } = await readRaw(await askStream("hello"))
    expect(ending).toBe("clean end")
    expect(text.match(/^event: \w+$/gm)).toEqual([
      "event: message_start",
      "event: ping",
      "event: content_block_start",
      "event: content_block_delta",
      "event: content_block_stop",
      "event: message_delta",
      "event: message_stop"
    ])
  })

  it("cuts a stream that goes silent: an in-band timeout_error event arrives, then the connection breaks", async () => {
    const response = await askStream("stall")
    expect(response.status).toBe(200)
    const { ending, text } = await readRaw(response)
    expect(ending).toBeInstanceOf(Error)
    expect(text).toContain("event: content_block_start")
    expect(text).toContain('event: error\ndata: {"type":"error","error":{"type":"timeout_error","message":"The upstream provider did not answer in time."}}')
    expect(text).not.toContain("message_stop")
    const helper = await failureOf(client.messages.stream({ model, max_tokens: 50, messages: [{ role: "user", content: "stall" }] }).finalMessage())
    expect((helper as ApiError).type).toBe("timeout_error")
  })

  it("relays the upstream's own in-band error with its type, then cuts the connection", async () => {
    const { ending, text } = await readRaw(await askStream("in-band"))
    expect(ending).toBeInstanceOf(Error)
    expect(text).toContain('"text":"Hel"')
    expect(text).toContain('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded (upstream, mid-stream)"}}')
    const helper = await failureOf(client.messages.stream({ model, max_tokens: 50, messages: [{ role: "user", content: "in-band" }] }).finalMessage())
    expect(helper).toBeInstanceOf(ProviderBClient.APIError)
    expect((helper as ApiError).type).toBe("overloaded_error")
  })

  it("does not pass a stream that closes before message_stop off as complete: an error event, then the cut", async () => {
    const { ending, text } = await readRaw(await askStream("truncated"))
    expect(ending).toBeInstanceOf(Error)
    expect(text).toContain('"text":"Hel"')
    expect(text).toContain("event: error")
    expect(text).not.toContain("message_stop")
    const helper = await failureOf(client.messages.stream({ model, max_tokens: 50, messages: [{ role: "user", content: "truncated" }] }).finalMessage())
    expect(helper).toBeInstanceOf(ProviderBClient.APIError)
  })

  it("aborts the upstream request as soon as the client breaks out of the stream, and records the cancellation", async () => {
    const before = upstream.closedEarly()
    const stream = await client.messages.create({ model, max_tokens: 50, messages: [{ role: "user", content: "slow" }], stream: true })
    let deltas = 0
    for await (const event of stream) {
      if (event.type === "content_block_delta" && ++deltas === 3) break
    }
    await eventually(() => upstream.closedEarly(), (closed) => closed === before + 1, 2_000)
    const rows = await eventually(
      () =>
        query<{ outcome: string; input_tokens: number; output_tokens: number }>(
          app.env.DATABASE_URL!,
          "SELECT outcome, input_tokens, output_tokens FROM api_requests WHERE workspace_id = $1 AND outcome = 'cancelled'",
          [workspaceId]
        ),
      (r) => r.length > 0
    )
    // Input from message_start; output estimated from the text generated until then (three "word ").
    expect(rows[0]!.input_tokens).toBe(12)
    expect(rows[0]!.output_tokens).toBeGreaterThanOrEqual(3)
  })
})
