import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey, createWorkspace, type RunningApp, startApp } from "../support/app"

/**
 * The forwarding lane serves the four forwarding endpoints straight from node:http. It must answer
 * exactly as the HttpApi app does: the same requests go to a service with the lane and to one
 * without it, and their answers are compared (generated ids and timings aside).
 */
interface Answer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

interface Keys {
  readonly completion: string
  readonly exportOnly: string
}

interface Case {
  readonly name: string
  readonly path: string
  readonly body: string
  readonly headers?: (keys: Keys) => Record<string, string>
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const chat = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "Say hello." }], ...fields })
const messages = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 50, messages: [{ role: "user", content: "Say hello." }], ...fields })
const fim = (fields: Record<string, unknown> = {}) => JSON.stringify({ model: "codemodel-latest", prompt: "def add(a, b):", ...fields })

const cases: ReadonlyArray<Case> = [
  { name: "no key", path: "/provider_a/eu/v1/chat/completions", body: chat() },
  { name: "no key (messages)", path: "/provider_b/eu/v1/messages", body: messages() },
  { name: "no key (FIM)", path: "/provider_c/eu/v1/fim/completions", body: fim() },
  { name: "unknown key", path: "/provider_a/eu/v1/chat/completions", body: chat(), headers: () => bearer(`wsk_${"A".repeat(43)}`) },
  { name: "key without the scope", path: "/provider_a/eu/v1/chat/completions", body: chat(), headers: (k) => bearer(k.exportOnly) },
  {
    name: "two different keys",
    path: "/provider_b/eu/v1/messages",
    body: messages(),
    headers: (k) => ({ ...bearer(k.completion), "x-api-key": k.exportOnly })
  },
  { name: "key in x-api-key", path: "/provider_b/eu/v1/messages", body: messages(), headers: (k) => ({ "x-api-key": k.completion }) },
  { name: "body not JSON", path: "/provider_a/eu/v1/chat/completions", body: "{not json", headers: (k) => bearer(k.completion) },
  { name: "empty body", path: "/provider_c/eu/v1/fim/completions", body: "", headers: (k) => bearer(k.completion) },
  {
    name: "missing field",
    path: "/provider_a/eu/v1/chat/completions",
    body: JSON.stringify({ model: "chatgen-4o" }),
    headers: (k) => bearer(k.completion)
  },
  {
    name: "field of the wrong type",
    path: "/provider_b/eu/v1/messages",
    body: messages({ max_tokens: "many" }),
    headers: (k) => bearer(k.completion)
  },
  { name: "bad role", path: "/provider_a/eu/v1/chat/completions", body: JSON.stringify({ model: "chatgen-4o", messages: [{ role: "robot", content: "x" }] }), headers: (k) => bearer(k.completion) },
  { name: "body over the limit", path: "/provider_a/eu/v1/chat/completions", body: chat({ user: "x".repeat(3000) }), headers: (k) => bearer(k.completion) },
  { name: "unknown region", path: "/provider_a/mars/v1/chat/completions", body: chat(), headers: (k) => bearer(k.completion) },
  { name: "unknown model", path: "/provider_a/eu/v1/embeddings", body: JSON.stringify({ model: "nope", input: "x" }), headers: (k) => bearer(k.completion) },
  { name: "chat completion", path: "/provider_a/eu/v1/chat/completions", body: chat(), headers: (k) => bearer(k.completion) },
  { name: "chat completion, query string", path: "/provider_a/eu/v1/chat/completions?trace=1", body: chat(), headers: (k) => bearer(k.completion) },
  { name: "chat completion stream", path: "/provider_a/us/v1/chat/completions", body: chat({ stream: true }), headers: (k) => bearer(k.completion) },
  { name: "embeddings", path: "/provider_a/eu/v1/embeddings", body: JSON.stringify({ model: "text-embedding-ada-002", input: "hello" }), headers: (k) => bearer(k.completion) },
  { name: "responses", path: "/provider_a/eu/v1/responses", body: JSON.stringify({ model: "chatgen-4o", input: "Say hello" }), headers: (k) => bearer(k.completion) },
  {
    name: "responses stream",
    path: "/provider_a/us/v1/responses",
    body: JSON.stringify({ model: "chatgen-4o", input: "Say hello", stream: true }),
    headers: (k) => bearer(k.completion)
  },
  { name: "responses, stored", path: "/provider_a/eu/v1/responses", body: JSON.stringify({ model: "chatgen-4o", input: "x", store: true }), headers: (k) => bearer(k.completion) },
  { name: "messages stream", path: "/provider_b/eu/v1/messages", body: messages({ stream: true }), headers: (k) => bearer(k.completion) },
  { name: "FIM", path: "/provider_c/eu/v1/fim/completions", body: fim(), headers: (k) => bearer(k.completion) },
  {
    name: "token count",
    path: "/provider_b/eu/v1/messages/count_tokens",
    body: JSON.stringify({ model: "assistantmodel-sonnet-4-5-20250929", messages: [{ role: "user", content: "Count me." }] }),
    headers: (k) => bearer(k.completion)
  },
  {
    name: "token count, unknown model",
    path: "/provider_b/us/v1/messages/count_tokens",
    body: JSON.stringify({ model: "nope", messages: [{ role: "user", content: "Count me." }] }),
    headers: (k) => bearer(k.completion)
  },
  {
    name: "upstream refusal passed through",
    path: "/provider_a/eu/v1/chat/completions",
    body: chat({ messages: [{ role: "user", content: "[simulator fault=rate_limit]" }] }),
    headers: (k) => bearer(k.completion)
  },
  {
    name: "stream broken midway",
    path: "/provider_b/eu/v1/messages",
    body: messages({ stream: true, messages: [{ role: "user", content: "[simulator fault=mid_stream_error fault_after=2]" }] }),
    headers: (k) => bearer(k.completion)
  }
]

/** Values that differ between any two answers: generated ids, times, durations. */
const generated = /("id":"[^"]*"|"created(?:_at)?":\d+|msg_[A-Za-z0-9]+|chatcmpl-[A-Za-z0-9]+|cmpl-[A-Za-z0-9]+|req_[0-9a-f]{32})/g
const comparedHeaders = /^(content-type|cache-control|x-content-type-options|x-frame-options|retry-after|x-should-retry|x-ratelimit-limit-.*|anthropic-ratelimit-.*-limit|x-workspace-api-simulated)$/

const send = async (app: RunningApp, keys: Keys, c: Case): Promise<Answer> => {
  const response = await fetch(`${app.url}${c.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...c.headers?.(keys) },
    body: c.body
  })
  const body = await response.text().catch((error: unknown) => `[connection cut: ${String(error)}]`)
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (comparedHeaders.test(name)) headers[name] = value
  })
  expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/)
  return { status: response.status, headers, body: body.replace(generated, "<generated>") }
}

const provision = async (app: RunningApp): Promise<Keys> => {
  const workspace = await createWorkspace(app)
  return {
    completion: (await createKey(app, workspace.id, ["COMPLETION_API"])).key,
    exportOnly: (await createKey(app, workspace.id, ["USAGE_EXPORT_API"])).key
  }
}

describe("the forwarding lane", () => {
  const env = { MAX_BODY_BYTES: "2000" }
  let withLane: RunningApp
  let withoutLane: RunningApp
  let laneKeys: Keys
  let referenceKeys: Keys

  beforeAll(async () => {
    ;[withLane, withoutLane] = await Promise.all([startApp(env, { stores: "postgres" }), startApp(env, { stores: "postgres", forwardingLane: false })])
    laneKeys = await provision(withLane)
    referenceKeys = await provision(withoutLane)
  })
  afterAll(async () => {
    await Promise.all([withLane?.stop(), withoutLane?.stop()])
  })

  it.each(cases)("answers like the HttpApi app: $name", async (c) => {
    const reference = await send(withoutLane, referenceKeys, c)
    const lane = await send(withLane, laneKeys, c)
    expect(lane).toEqual(reference)
  })

  it("keeps the caller's request id and leaves other content types to the HttpApi app", async () => {
    const kept = await fetch(`${withLane.url}/provider_a/eu/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "trace-1234abcd", ...bearer(laneKeys.completion) },
      body: chat()
    })
    expect(kept.status).toBe(200)
    expect(kept.headers.get("x-request-id")).toBe("trace-1234abcd")
    const text = await fetch(`${withLane.url}/provider_a/eu/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "text/plain", ...bearer(laneKeys.completion) },
      body: chat()
    })
    // The framework refuses a body declared as anything but JSON, before any parser runs.
    expect(text.status).toBe(415)
    expect(((await text.json()) as { error: { type: string; code: string } }).error).toMatchObject({
      type: "invalid_request_error",
      code: "unsupported_media_type"
    })
  })
})
