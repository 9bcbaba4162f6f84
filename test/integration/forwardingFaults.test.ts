import { Mistral as ProviderCClient } from "@mistralai/mistralai"
import { HTTPValidationError, SDKError } from "@mistralai/mistralai/models/errors"
import ProviderBClient from "@anthropic-ai/sdk"
import type { ServerResponse } from "node:http"
import ProviderAClient from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey, createWorkspace, type PostgresApp, startApp } from "../support/app"
import { query } from "../support/database"
import { chatCompletionAnswer, eventually, type FakeUpstream, startFakeUpstream } from "../support/fakeUpstream"

/**
 * One table of (provider endpoint × upstream fault × expected answer), run against one service whose three
 * providers' eu upstreams are one fake upstream (answering each protocol by its path), and whose us upstreams
 * refuse connections. A second service waits long for first bytes (only a client leaving ends a request) and
 * has provider_c's only region unreachable. Each provider's endpoint has its own workspace, so the usage rows
 * a case looks for are its own.
 */

type Behaviour = (body: any, response: ServerResponse) => void

/** Sends an event every 50 ms, for a long time (the client breaks out of the stream first). */
const trickle = (response: ServerResponse, event: () => string) => {
  let sent = 0
  const timer = setInterval(() => {
    if (response.destroyed || sent++ > 400) return void clearInterval(timer)
    response.write(event())
  }, 50)
  response.on("close", () => clearInterval(timer))
}

// provider_a, chat completions.
const chatChunk = (content: string) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "chatgen-4o", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`

/**
 * By the last user message: "hang" (no headers), "stall" (two events, then silence), "truncated" (two
 * events, then a clean close without [DONE]), "slow" (an event every 50 ms), "reject" (a 400 of the
 * provider's own), "forbid" (401: the service's credentials), else a short complete answer.
 */
const chatCompletions: Behaviour = (body, response) => {
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
      response.write(chatChunk("a"))
      response.write(chatChunk("b"))
      if (said === "truncated") response.end()
      return
    }
    if (said === "slow") return trickle(response, () => chatChunk("word "))
    response.write(chatChunk("done"))
    response.end("data: [DONE]\n\n")
    return
  }
  // Its own account's limits, as real providers send on every answer: not the workspace's.
  response.writeHead(200, { "content-type": "application/json", "x-ratelimit-limit-requests": "30000", "x-ratelimit-remaining-tokens": "149999000" })
  response.end(chatCompletionAnswer())
}

// provider_b, messages.
const messagesModel = "assistantmodel-sonnet-4-5-20250929"
const event = (name: string, data: Record<string, unknown>) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`
const messageStart = event("message_start", {
  message: { id: "msg_1", type: "message", role: "assistant", model: messagesModel, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } }
})
const blockStart = event("content_block_start", { index: 0, content_block: { type: "text", text: "" } })
const textDelta = (text: string) => event("content_block_delta", { index: 0, delta: { type: "text_delta", text } })
const messagesError = (type: string, message: string) => JSON.stringify({ type: "error", error: { type, message }, request_id: "req_up" })

/**
 * By the last user message: "hang", "stall", "slow", "in-band" (its own overloaded error event after a
 * delta, then a clean close), "truncated" (a delta, then a clean close without message_stop), "reject",
 * "forbid", "overloaded" (529 with a retry hint), "garbage" (a 200 that is no Message), else a short answer.
 */
const messages: Behaviour = (body, response) => {
  const said: string = body?.messages?.at(-1)?.content ?? ""
  if (said === "hang") return
  const refuse = (status: number, type: string, message: string, headers: Record<string, string> = {}) => {
    response.writeHead(status, { "content-type": "application/json", ...headers })
    response.end(messagesError(type, message))
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
      return trickle(response, () => textDelta("word "))
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
    model: messagesModel,
    content: [{ type: "text", text: "ok" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 1 }
  }))
}

// provider_c, FIM completions.
const fimModel = "codemodel-2501"
const fimChunk = (content: string, finishReason: string | null | undefined = null, extra: Record<string, unknown> = {}) =>
  `data: ${
    JSON.stringify({
      id: "cmpl-1",
      object: "chat.completion.chunk",
      created: 1,
      model: fimModel,
      choices: [{ index: 0, delta: { content }, ...(finishReason === undefined ? {} : { finish_reason: finishReason }) }],
      ...extra
    })
  }\n\n`
const fimCompletion = (finishReason: string | null) =>
  JSON.stringify({
    id: "cmpl-1",
    object: "chat.completion",
    created: 1,
    model: fimModel,
    usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
    choices: [{ index: 0, message: { role: "assistant", content: "ok", prefix: false }, finish_reason: finishReason }]
  })

/**
 * By the prompt: "hang", "stall", "truncated", "slow", "in-band" (its own error chunk, then a clean
 * close), "no-finish-key" (chunks without the finish_reason key), "null-finish" (a JSON answer with a null
 * finish_reason), "reject" (400 of its own), "unprocessable" (its 422 validation body), "forbid", else a
 * short complete answer.
 */
const fimCompletions: Behaviour = (body, response) => {
  const said: string = body?.prompt ?? ""
  if (said === "hang") return
  const refuse = (status: number, payload: unknown) => {
    response.writeHead(status, { "content-type": "application/json" })
    response.end(JSON.stringify(payload))
  }
  if (said === "reject") {
    return refuse(400, { object: "error", message: "Prompt is not acceptable upstream", type: "invalid_request_error", param: null, code: null })
  }
  if (said === "unprocessable") {
    return refuse(422, { detail: [{ type: "less_than_equal", loc: ["body", "temperature"], msg: "Input should be less than or equal to 1.5" }] })
  }
  if (said === "forbid") return refuse(401, { message: "Unauthorized", request_id: "r1" })
  if (body?.stream) {
    response.writeHead(200, { "content-type": "text/event-stream" })
    if (said === "stall" || said === "truncated") {
      response.write(fimChunk("a"))
      response.write(fimChunk("b"))
      if (said === "truncated") response.end()
      return
    }
    if (said === "in-band") {
      response.write(fimChunk("a"))
      response.end(`data: ${JSON.stringify({ object: "error", message: "Upstream broke mid-stream", type: "internal_server_error", param: null, code: "3000" })}\n\n`)
      return
    }
    if (said === "slow") return trickle(response, () => fimChunk("word "))
    const finish = said === "no-finish-key" ? undefined : null
    response.write(fimChunk("", finish))
    response.write(fimChunk("done", finish))
    response.end(fimChunk("", "stop", { usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }) + "data: [DONE]\n\n")
    return
  }
  response.writeHead(200, { "content-type": "application/json" })
  response.end(fimCompletion(said === "null-finish" ? null : "stop"))
}

/** Each protocol's behaviour, by the path the service calls upstream. */
const behaviours: Record<string, Behaviour> = {
  "/v1/chat/completions": chatCompletions,
  "/v1/messages": messages,
  "/v1/fim/completions": fimCompletions
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
type ProviderAError = InstanceType<typeof ProviderAClient.APIError>
type ProviderBError = InstanceType<typeof ProviderBClient.APIError>

const readFimStream = async (stream: AsyncIterable<{ data: { choices: Array<{ delta: { content?: unknown }; finishReason: string | null }> } }>) => {
  let text = ""
  for await (const event of stream) {
    for (const choice of event.data.choices) if (typeof choice.delta.content === "string") text += choice.delta.content
  }
  return text
}

type Provider = "provider_a" | "provider_b" | "provider_c"

/** What every case may use: the services, the fake upstream, each provider's key, workspace and client. */
interface Setting {
  readonly app: PostgresApp
  /** First bytes awaited for 30 s; provider_a's eu upstream is the fake one, provider_c's eu refuses connections. */
  readonly patient: PostgresApp
  readonly upstream: FakeUpstream
  readonly key: Record<Provider, string>
  readonly patientKey: Record<"provider_a" | "provider_c", string>
  readonly workspaceId: Record<Provider, string>
  readonly chatClient: ProviderAClient
  readonly messagesClient: ProviderBClient
  readonly fimClient: ProviderCClient
}

interface Case {
  readonly endpoint: "provider_a chat completions" | "provider_b messages" | "provider_c FIM completions"
  readonly fault: string
  readonly expected: string
  readonly check: (setting: Setting) => Promise<void>
}

/** A chat completions request by fetch, with the caller's own headers and fields the service drops. */
const askChat = (s: Setting, content: string, stream = false) =>
  fetch(`${s.app.url}/provider_a/eu/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key.provider_a}`, "content-type": "application/json", "x-stainless-lang": "js", cookie: "a=b" },
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

const askMessages = (s: Setting, content: string) =>
  s.messagesClient.messages.create({ model: messagesModel, max_tokens: 50, messages: [{ role: "user", content }] })
const askMessagesStream = (s: Setting, content: string) =>
  s.messagesClient.messages.create({ model: messagesModel, max_tokens: 50, messages: [{ role: "user", content }], stream: true }).asResponse()

/** The raw bytes of a FIM stream (the library hides them). */
const rawFimStream = async (s: Setting, prompt: string) => {
  const response = await fetch(`${s.app.url}/provider_c/eu/v1/fim/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key.provider_c}`, "content-type": "application/json" },
    body: JSON.stringify({ model: fimModel, prompt, stream: true })
  })
  expect(response.status).toBe(200)
  return readRaw(response)
}

/** The usage rows of a provider's workspace with the given condition, once there is at least `atLeast`. */
const rowsOnceThere = <Row extends object>(s: Setting, provider: Provider, columns: string, where: string, atLeast = 1) =>
  eventually(
    () => query<Row>(s.app.databaseUrl, `SELECT ${columns} FROM api_requests WHERE workspace_id = $1 AND ${where}`, [s.workspaceId[provider]]),
    (rows) => rows.length >= atLeast
  )

const chat = "provider_a chat completions" as const
const msgs = "provider_b messages" as const
const fim = "provider_c FIM completions" as const

const cases: ReadonlyArray<Case> = [
  {
    endpoint: chat,
    fault: "none (a complete answer)",
    expected: "the service's credentials and the validated body go upstream, never the caller's key or headers",
    check: async (s) => {
      const answer = await askChat(s, "hello")
      expect(answer.status).toBe(200)
      const seen = s.upstream.seen.at(-1)!
      expect(seen.path).toBe("/v1/chat/completions")
      expect(seen.headers.authorization).toBe("Bearer upstream-secret")
      expect(JSON.stringify(seen.headers)).not.toContain(s.key.provider_a)
      expect(seen.headers["x-stainless-lang"]).toBeUndefined()
      expect(seen.headers.cookie).toBeUndefined()
      expect(seen.body).toEqual({ model: "chatgen-4o", messages: [{ role: "user", content: "hello" }], stream: false })
      // The workspace's limits (500 requests a minute by default), never the upstream account's.
      expect(answer.headers.get("x-ratelimit-limit-requests")).toBe("500")
      expect(Number(answer.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(1_000_000)
      await (await askChat(s, "hello", true)).text()
      expect(s.upstream.seen.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
      expect(s.upstream.seen.at(-1)!.body.n).toBeUndefined()
    }
  },
  {
    endpoint: chat,
    fault: "a 4xx of its own; a 401 to our credentials",
    expected: "its 4xx passed through in the endpoint's format; 502 for the 401, naming neither secret nor upstream",
    check: async (s) => {
      const rejected = await askChat(s, "reject")
      expect(rejected.status).toBe(400)
      expect(await rejected.json()).toEqual({
        error: { message: "messages[0] is not acceptable upstream", type: "invalid_request_error", param: "messages", code: "invalid_request_error" }
      })
      const forbidden = await askChat(s, "forbid")
      expect(forbidden.status).toBe(502)
      const body = await forbidden.text()
      expect(body).not.toContain("upstream-secret")
      expect(body).not.toContain(s.upstream.url)
    }
  },
  {
    endpoint: chat,
    fault: "no headers in time; not reachable",
    expected: "504; 502 without the upstream's address",
    check: async (s) => {
      const timedOut = await failureOf(s.chatClient.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "hang" }] }))
      expect((timedOut as ProviderAError).status).toBe(504)
      const refused = new ProviderAClient({ apiKey: s.key.provider_a, baseURL: `${s.app.url}/provider_a/us/v1`, maxRetries: 0 })
      const unreachable = await failureOf(refused.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] }))
      expect((unreachable as ProviderAError).status).toBe(502)
      expect((unreachable as Error).message).not.toContain("127.0.0.1")
    }
  },
  {
    endpoint: chat,
    fault: "a stream that goes silent",
    expected: "the in-band error arrives, then the connection breaks",
    check: async (s) => {
      const response = await askChat(s, "stall", true)
      expect(response.status).toBe(200)
      const { ending, text } = await readRaw(response)
      expect(ending).toBeInstanceOf(Error)
      expect(text).toContain('"content":"b"')
      expect(text).toContain('"error":{"message":"The upstream provider did not answer in time."')
      expect(text).not.toContain("[DONE]")
    }
  },
  {
    endpoint: chat,
    fault: "a stream that closes before [DONE]",
    expected: "not passed off as complete: the client library sees an error, the request is recorded failed",
    check: async (s) => {
      const stream = await s.chatClient.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "truncated" }], stream: true })
      const received: Array<string> = []
      const ending = await (async () => {
        for await (const part of stream) received.push(part.choices[0]?.delta.content ?? "")
        return "clean end"
      })().catch((e: unknown) => e)
      expect(ending).toBeInstanceOf(Error)
      expect(received).toEqual(["a", "b"])
      const rows = await rowsOnceThere<{ status: number }>(s, "provider_a", "outcome, status", "outcome = 'failed' AND stream")
      expect(rows[0]!.status).toBe(200)
    }
  },
  {
    endpoint: chat,
    fault: "a long stream the client breaks out of",
    expected: "the upstream request aborted at once, the cancellation recorded with the tokens generated",
    check: async (s) => {
      const before = s.upstream.closedEarly()
      const stream = await s.chatClient.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "slow" }], stream: true })
      let received = 0
      for await (const _chunk of stream) {
        if (++received === 3) break
      }
      await eventually(() => s.upstream.closedEarly(), (closed) => closed === before + 1, 2_000)
      const rows = await rowsOnceThere<{ output_tokens: number }>(s, "provider_a", "outcome, output_tokens, status", "outcome = 'cancelled'")
      // What was generated until then is billed: at least the three "word " chunks read.
      expect(rows[0]!.output_tokens).toBeGreaterThanOrEqual(3)
    }
  },
  {
    endpoint: chat,
    fault: "no headers yet when the client leaves (first-byte timeout far beyond the test)",
    expected: "the upstream request aborted at once",
    check: async (s) => {
      const before = { seen: s.upstream.seen.length, closed: s.upstream.closedEarly() }
      const leaving = new AbortController()
      const pending = fetch(`${s.patient.url}/provider_a/eu/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.patientKey.provider_a}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "hang" }] }),
        signal: leaving.signal
      }).catch((e: unknown) => e)
      await eventually(() => s.upstream.seen.length, (n) => n > before.seen, 5_000)
      leaving.abort()
      expect(await pending).toBeInstanceOf(Error)
      await eventually(() => s.upstream.closedEarly(), (closed) => closed === before.closed + 1, 5_000)
    }
  },
  {
    endpoint: msgs,
    fault: "none (a complete answer)",
    expected: "the service's key and configured version with the validated body go upstream, never the caller's key or headers",
    check: async (s) => {
      await askMessages(s, "hello")
      const seen = s.upstream.seen.at(-1)!
      expect(seen.path).toBe("/v1/messages")
      expect(seen.headers["x-api-key"]).toBe("upstream-secret")
      expect(seen.headers["anthropic-version"]).toBe("2023-01-01")
      // The caller's beta header turns on features its body may use: it is the one header passed on.
      expect(seen.headers["anthropic-beta"]).toBe("some-beta-2099-01-01")
      expect(seen.headers.authorization).toBeUndefined()
      expect(JSON.stringify(seen.headers)).not.toContain(s.key.provider_b)
      expect(seen.headers["x-stainless-lang"]).toBeUndefined()
      expect(seen.headers.cookie).toBeUndefined()
      expect(seen.body).toEqual({ model: messagesModel, max_tokens: 50, messages: [{ role: "user", content: "hello" }] })
    }
  },
  {
    endpoint: msgs,
    fault: "none, but a malformed beta header from the caller",
    expected: "400 naming the header before anything goes upstream; a list of betas passed on",
    check: async (s) => {
      const before = s.upstream.seen.length
      const response = await fetch(`${s.app.url}/provider_b/eu/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": s.key.provider_b, "content-type": "application/json", "anthropic-beta": "feature one; drop table" },
        body: JSON.stringify({ model: messagesModel, max_tokens: 50, messages: [{ role: "user", content: "hello" }] })
      })
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({
        type: "error",
        error: { type: "invalid_request_error", message: "anthropic-beta: expected a comma-separated list of beta feature names." }
      })
      expect(s.upstream.seen.length).toBe(before)
      const several = await s.messagesClient.messages.create(
        { model: messagesModel, max_tokens: 50, messages: [{ role: "user", content: "hello" }] },
        { headers: { "anthropic-beta": "feature-a-2025-01-01, feature-b-2025-02-02" } }
      )
      expect(several.type).toBe("message")
      expect(s.upstream.seen.at(-1)!.headers["anthropic-beta"]).toBe("feature-a-2025-01-01, feature-b-2025-02-02")
    }
  },
  {
    endpoint: msgs,
    fault: "a 4xx of its own; a 401 to our key",
    expected: "its 4xx passed through in the messages format; 502 api_error for the 401, naming neither secret nor upstream",
    check: async (s) => {
      const rejected = await failureOf(askMessages(s, "reject"))
      expect(rejected).toBeInstanceOf(ProviderBClient.BadRequestError)
      expect((rejected as ProviderBError).type).toBe("invalid_request_error")
      expect((rejected as ProviderBError).apiMessage).toBe("messages.0.content: upstream finds this unacceptable")
      const forbidden = await failureOf(askMessages(s, "forbid"))
      expect(forbidden).toBeInstanceOf(ProviderBClient.InternalServerError)
      expect((forbidden as ProviderBError).status).toBe(502)
      expect((forbidden as ProviderBError).type).toBe("api_error")
      expect((forbidden as Error).message).not.toContain("upstream-secret")
      expect((forbidden as Error).message).not.toContain(s.upstream.url)
    }
  },
  {
    endpoint: msgs,
    fault: "529 overloaded with a retry hint; a 200 that is no Message",
    expected: "the 529 passed through with its retry hint; 502",
    check: async (s) => {
      const overloaded = await failureOf(askMessages(s, "overloaded"))
      expect(overloaded).toBeInstanceOf(ProviderBClient.OverloadedError)
      expect((overloaded as ProviderBError).type).toBe("overloaded_error")
      expect((overloaded as ProviderBError).headers?.get("retry-after")).toBe("7")
      const garbage = await failureOf(askMessages(s, "garbage"))
      expect((garbage as ProviderBError).status).toBe(502)
    }
  },
  {
    endpoint: msgs,
    fault: "no headers in time; not reachable",
    expected: "504 timeout_error; 502 without the upstream's address",
    check: async (s) => {
      const timedOut = await failureOf(askMessages(s, "hang"))
      expect((timedOut as ProviderBError).status).toBe(504)
      expect((timedOut as ProviderBError).type).toBe("timeout_error")
      const refused = new ProviderBClient({ apiKey: s.key.provider_b, baseURL: `${s.app.url}/provider_b/us`, maxRetries: 0 })
      const unreachable = await failureOf(refused.messages.create({ model: messagesModel, max_tokens: 10, messages: [{ role: "user", content: "hi" }] }))
      expect((unreachable as ProviderBError).status).toBe(502)
      expect((unreachable as Error).message).not.toContain("127.0.0.1")
    }
  },
  {
    endpoint: msgs,
    fault: "none (a complete stream)",
    expected: "relayed event by event, each with its event: line",
    check: async (s) => {
      const { ending, text } = await readRaw(await askMessagesStream(s, "hello"))
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
    }
  },
  {
    endpoint: msgs,
    fault: "a stream that goes silent",
    expected: "an in-band timeout_error event arrives, then the connection breaks",
    check: async (s) => {
      const response = await askMessagesStream(s, "stall")
      expect(response.status).toBe(200)
      const { ending, text } = await readRaw(response)
      expect(ending).toBeInstanceOf(Error)
      expect(text).toContain("event: content_block_start")
      expect(text).toContain('event: error\ndata: {"type":"error","error":{"type":"timeout_error","message":"The upstream provider did not answer in time."}}')
      expect(text).not.toContain("message_stop")
      const helper = await failureOf(s.messagesClient.messages.stream({ model: messagesModel, max_tokens: 50, messages: [{ role: "user", content: "stall" }] }).finalMessage())
      expect((helper as ProviderBError).type).toBe("timeout_error")
    }
  },
  {
    endpoint: msgs,
    fault: "its own in-band error",
    expected: "relayed with its type, then the connection cut",
    check: async (s) => {
      const { ending, text } = await readRaw(await askMessagesStream(s, "in-band"))
      expect(ending).toBeInstanceOf(Error)
      expect(text).toContain('"text":"Hel"')
      expect(text).toContain('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded (upstream, mid-stream)"}}')
      const helper = await failureOf(s.messagesClient.messages.stream({ model: messagesModel, max_tokens: 50, messages: [{ role: "user", content: "in-band" }] }).finalMessage())
      expect(helper).toBeInstanceOf(ProviderBClient.APIError)
      expect((helper as ProviderBError).type).toBe("overloaded_error")
    }
  },
  {
    endpoint: msgs,
    fault: "a stream that closes before message_stop",
    expected: "not passed off as complete: an error event, then the cut",
    check: async (s) => {
      const { ending, text } = await readRaw(await askMessagesStream(s, "truncated"))
      expect(ending).toBeInstanceOf(Error)
      expect(text).toContain('"text":"Hel"')
      expect(text).toContain("event: error")
      expect(text).not.toContain("message_stop")
      const helper = await failureOf(s.messagesClient.messages.stream({ model: messagesModel, max_tokens: 50, messages: [{ role: "user", content: "truncated" }] }).finalMessage())
      expect(helper).toBeInstanceOf(ProviderBClient.APIError)
    }
  },
  {
    endpoint: msgs,
    fault: "a long stream the client breaks out of",
    expected: "the upstream request aborted at once, the cancellation recorded with input and output tokens",
    check: async (s) => {
      const before = s.upstream.closedEarly()
      const stream = await s.messagesClient.messages.create({ model: messagesModel, max_tokens: 50, messages: [{ role: "user", content: "slow" }], stream: true })
      let deltas = 0
      for await (const event of stream) {
        if (event.type === "content_block_delta" && ++deltas === 3) break
      }
      await eventually(() => s.upstream.closedEarly(), (closed) => closed === before + 1, 2_000)
      const rows = await rowsOnceThere<{ input_tokens: number; output_tokens: number }>(s, "provider_b", "outcome, input_tokens, output_tokens", "outcome = 'cancelled'")
      // Input from message_start; output estimated from the text generated until then (three "word ").
      expect(rows[0]!.input_tokens).toBe(12)
      expect(rows[0]!.output_tokens).toBeGreaterThanOrEqual(3)
    }
  },
  {
    endpoint: fim,
    fault: "none (a complete answer)",
    expected: "the service's credentials and the validated body with its defaults go upstream, never the caller's key or headers",
    check: async (s) => {
      await s.fimClient.fim.complete({ model: fimModel, prompt: "hello" })
      const seen = s.upstream.seen.at(-1)!
      expect(seen.path).toBe("/v1/fim/completions")
      expect(seen.headers.authorization).toBe("Bearer upstream-secret")
      expect(JSON.stringify(seen.headers)).not.toContain(s.key.provider_c)
      expect(seen.headers.cookie).toBeUndefined()
      expect(seen.headers["user-agent"]).toBe("workspace-api")
      expect(seen.body).toEqual({ model: fimModel, prompt: "hello", suffix: "", stream: false })
    }
  },
  {
    endpoint: fim,
    fault: "a 4xx of its own; its 422 validation body; a 401 to our credentials",
    expected: "its 4xx passed through in the FIM format, the 422 named by field; 502 for the 401, naming neither secret nor upstream",
    check: async (s) => {
      const rejected = await failureOf(s.fimClient.fim.complete({ model: fimModel, prompt: "reject" }))
      expect((rejected as SDKError).statusCode).toBe(400)
      expect(JSON.parse((rejected as SDKError).body)).toMatchObject({ object: "error", message: "Prompt is not acceptable upstream", type: "invalid_request_error" })
      const unprocessable = await failureOf(s.fimClient.fim.complete({ model: fimModel, prompt: "unprocessable" }))
      expect(unprocessable).toBeInstanceOf(HTTPValidationError)
      expect(JSON.parse((unprocessable as HTTPValidationError).body)).toMatchObject({
        object: "error",
        param: "temperature",
        message: "temperature: Input should be less than or equal to 1.5"
      })
      const forbidden = await failureOf(s.fimClient.fim.complete({ model: fimModel, prompt: "forbid" }))
      expect((forbidden as SDKError).statusCode).toBe(502)
      expect((forbidden as SDKError).body).not.toContain("upstream-secret")
      expect((forbidden as SDKError).body).not.toContain(s.upstream.url)
    }
  },
  {
    endpoint: fim,
    fault: "a JSON answer with a null finish_reason (the library would reject it)",
    expected: "502",
    check: async (s) => {
      const failure = await failureOf(s.fimClient.fim.complete({ model: fimModel, prompt: "null-finish" }))
      expect((failure as SDKError).statusCode).toBe(502)
    }
  },
  {
    endpoint: fim,
    fault: "streamed chunks without the finish_reason key",
    expected: "every streamed choice gets its finish_reason key, null until the last",
    check: async (s) => {
      expect(await readFimStream(await s.fimClient.fim.stream({ model: fimModel, prompt: "no-finish-key" }))).toBe("done")
    }
  },
  {
    endpoint: fim,
    fault: "no headers in time; not reachable",
    expected: "504; 502 without the upstream's address",
    check: async (s) => {
      const timedOut = await failureOf(s.fimClient.fim.complete({ model: fimModel, prompt: "hang" }))
      expect((timedOut as SDKError).statusCode).toBe(504)
      const refused = new ProviderCClient({ apiKey: s.patientKey.provider_c, serverURL: `${s.patient.url}/provider_c/eu` })
      const failure = await failureOf(refused.fim.complete({ model: fimModel, prompt: "hi" }))
      expect((failure as SDKError).statusCode).toBe(502)
      expect((failure as SDKError).body).not.toContain("127.0.0.1")
    }
  },
  {
    endpoint: fim,
    fault: "a stream that goes silent",
    expected: "the in-band error chunk arrives, then the connection breaks",
    check: async (s) => {
      const { ending, text } = await rawFimStream(s, "stall")
      expect(ending).toBeInstanceOf(Error)
      expect(text).toContain('"content":"b"')
      expect(text).toContain('data: {"object":"error","message":"The upstream provider did not answer in time.","type":"server_error","param":null,"code":"upstream_timeout"}')
      expect(text).not.toContain("[DONE]")
      expect(await failureOf(readFimStream(await s.fimClient.fim.stream({ model: fimModel, prompt: "stall" })))).toBeInstanceOf(Error)
    }
  },
  {
    endpoint: fim,
    fault: "a stream that closes before [DONE]",
    expected: "not passed off as complete: an error chunk, then the cut",
    check: async (s) => {
      const { ending, text } = await rawFimStream(s, "truncated")
      expect(ending).toBeInstanceOf(Error)
      expect(text).toContain('"content":"b"')
      expect(text).toContain('"code":"upstream_malformed"')
      expect(text).not.toContain("[DONE]")
      expect(await failureOf(readFimStream(await s.fimClient.fim.stream({ model: fimModel, prompt: "truncated" })))).toBeInstanceOf(Error)
    }
  },
  {
    endpoint: fim,
    fault: "its own in-band error",
    expected: "relayed, then the connection cut; both streams recorded failed",
    check: async (s) => {
      const { ending, text } = await rawFimStream(s, "in-band")
      expect(ending).toBeInstanceOf(Error)
      expect(text).toContain('"content":"a"')
      expect(text).toContain('data: {"object":"error","message":"Upstream broke mid-stream","type":"server_error","param":null,"code":"3000"}')
      expect(await failureOf(readFimStream(await s.fimClient.fim.stream({ model: fimModel, prompt: "in-band" })))).toBeInstanceOf(Error)
      // The two streams of the cases before (silent, truncated) failed too: at least two rows, whichever are recorded first.
      const failed = await rowsOnceThere(s, "provider_c", "outcome", "stream AND outcome = 'failed'", 2)
      expect(failed.length).toBeGreaterThanOrEqual(2)
    }
  },
  {
    endpoint: fim,
    fault: "a long stream the client breaks out of",
    expected: "the upstream request aborted at once, the cancellation recorded with the tokens generated",
    check: async (s) => {
      const before = s.upstream.closedEarly()
      let received = 0
      for await (const _event of await s.fimClient.fim.stream({ model: fimModel, prompt: "slow" })) {
        if (++received === 3) break
      }
      await eventually(() => s.upstream.closedEarly(), (closed) => closed === before + 1, 2_000)
      const rows = await rowsOnceThere<{ output_tokens: number }>(s, "provider_c", "outcome, output_tokens", "outcome = 'cancelled'")
      expect(rows[0]!.output_tokens).toBeGreaterThanOrEqual(3)
    }
  }
]

describe("forwarding against a misbehaving upstream", () => {
  let upstream: FakeUpstream
  const setting: { current?: Setting } = {}

  beforeAll(async () => {
    upstream = await startFakeUpstream((request, response) => behaviours[request.path]?.(request.body, response))
    const fake = { URL: upstream.url, KEY: "upstream-secret" }
    // Nothing listens there: connections are refused.
    const refusing = { URL: "http://127.0.0.1:9", KEY: "x" }
    const upstreams = (routes: Record<string, { URL: string; KEY: string }>) =>
      Object.fromEntries(Object.entries(routes).flatMap(([route, { KEY, URL }]) => [[`UPSTREAM_${route}_URL`, URL], [`UPSTREAM_${route}_KEY`, KEY]]))
    const [app, patient] = await Promise.all([
      startApp({
        ...upstreams({ PROVIDER_A_EU: fake, PROVIDER_B_EU: fake, PROVIDER_C_EU: fake, PROVIDER_A_US: refusing, PROVIDER_B_US: refusing }),
        UPSTREAM_MESSAGES_VERSION: "2023-01-01",
        UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "400",
        UPSTREAM_IDLE_TIMEOUT_MS: "400"
      }, { stores: "postgres" }),
      // A first-byte timeout far beyond the test: only the client leaving can end the upstream request.
      startApp({ ...upstreams({ PROVIDER_A_EU: fake, PROVIDER_C_EU: refusing }), UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "30000" }, { stores: "postgres" })
    ])
    const workspaceAndKey = async (on: PostgresApp, name: string) => {
      const workspace = await createWorkspace(on, name)
      return { id: workspace.id, key: (await createKey(on, workspace.id, ["COMPLETION_API"])).key }
    }
    const [a, b, c, patientA, patientC] = await Promise.all([
      workspaceAndKey(app, "A"),
      workspaceAndKey(app, "B"),
      workspaceAndKey(app, "C"),
      workspaceAndKey(patient, "A"),
      workspaceAndKey(patient, "C")
    ])
    setting.current = {
      app,
      patient,
      upstream,
      key: { provider_a: a.key, provider_b: b.key, provider_c: c.key },
      patientKey: { provider_a: patientA.key, provider_c: patientC.key },
      workspaceId: { provider_a: a.id, provider_b: b.id, provider_c: c.id },
      chatClient: new ProviderAClient({ apiKey: a.key, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 }),
      messagesClient: new ProviderBClient({
        apiKey: b.key,
        baseURL: `${app.url}/provider_b/eu`,
        maxRetries: 0,
        defaultHeaders: { "anthropic-beta": "some-beta-2099-01-01", cookie: "a=b" }
      }),
      fimClient: new ProviderCClient({ apiKey: c.key, serverURL: `${app.url}/provider_c/eu` })
    }
  })
  afterAll(async () => {
    await Promise.all([setting.current?.app.stop(), setting.current?.patient.stop()])
    await upstream?.close()
  })

  it.each(cases.map((row) => [`${row.endpoint} × ${row.fault}: ${row.expected}`, row.check] as const))("%s", async (_, check) => {
    await check(setting.current!)
  })
})
