import { Mistral as ProviderCClient } from "@mistralai/mistralai"
import { HTTPValidationError, SDKError } from "@mistralai/mistralai/models/errors"
import type { ServerResponse } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database"
import { eventually, type FakeUpstream, startFakeUpstream } from "../support/fakeUpstream"
import { createKey, createWorkspace, type RunningApp, startApp } from "../support/app"

const model = "codemodel-2501"

const chunk = (content: string, finishReason: string | null | undefined = null, extra: Record<string, unknown> = {}) =>
  `data: ${
    JSON.stringify({
      id: "cmpl-1",
      object: "chat.completion.chunk",
      created: 1,
      model,
      choices: [{ index: 0, delta: { content }, ...(finishReason === undefined ? {} : { finish_reason: finishReason }) }],
      ...extra
    })
  }\n\n`

const completion = (finishReason: string | null) =>
  JSON.stringify({
    id: "cmpl-1",
    object: "chat.completion",
    created: 1,
    model,
    usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
    choices: [{ index: 0, message: { role: "assistant", content: "ok", prefix: false }, finish_reason: finishReason }]
  })

/**
 * The upstream's behaviour is chosen by the prompt: "hang" (no headers), "stall" (two chunks,
 * then silence), "truncated" (two chunks, then a clean close without [DONE]), "slow" (a chunk
 * every 50 ms, for a long time), "in-band" (its own error chunk,
 * then a clean close), "no-finish-key" (chunks without the finish_reason key), "null-finish" (a
 * JSON answer with a null finish_reason), "reject" (400 of its own), "unprocessable" (its 422
 * validation body), "forbid" (401: the service's credentials), else a short complete answer.
 */
const behave = (body: any, response: ServerResponse) => {
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
      response.write(chunk("a"))
      response.write(chunk("b"))
      if (said === "truncated") response.end()
      return
    }
    if (said === "in-band") {
      response.write(chunk("a"))
      response.end(`data: ${JSON.stringify({ object: "error", message: "Upstream broke mid-stream", type: "internal_server_error", param: null, code: "3000" })}\n\n`)
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
    const finish = said === "no-finish-key" ? undefined : null
    response.write(chunk("", finish))
    response.write(chunk("done", finish))
    response.end(chunk("", "stop", { usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }) + "data: [DONE]\n\n")
    return
  }
  response.writeHead(200, { "content-type": "application/json" })
  response.end(completion(said === "null-finish" ? null : "stop"))
}

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

const readStream = async (stream: AsyncIterable<{ data: { choices: Array<{ delta: { content?: unknown }; finishReason: string | null }> } }>) => {
  let text = ""
  for await (const event of stream) {
    for (const choice of event.data.choices) if (typeof choice.delta.content === "string") text += choice.delta.content
  }
  return text
}

describe("FIM forwarding against a misbehaving upstream", () => {
  let upstream: FakeUpstream
  let app: RunningApp
  let client: ProviderCClient
  let key: string
  let workspaceId: string

  beforeAll(async () => {
    upstream = await startFakeUpstream((request, response) => behave(request.body, response))
    app = await startApp({
      UPSTREAM_PROVIDER_C_EU_URL: upstream.url,
      UPSTREAM_PROVIDER_C_EU_KEY: "upstream-secret",
      UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "400",
      UPSTREAM_IDLE_TIMEOUT_MS: "400"
    }, { stores: "postgres" })
    const workspace = await createWorkspace(app)
    workspaceId = workspace.id
    key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
    client = new ProviderCClient({ apiKey: key, serverURL: `${app.url}/provider_c/eu` })
  })
  afterAll(async () => {
    await app?.stop()
    await upstream?.close()
  })

  it("sends the service's credentials and the validated body with its defaults, never the caller's key or headers", async () => {
    await client.fim.complete({ model, prompt: "hello" })
    const seen = upstream.seen.at(-1)!
    expect(seen.path).toBe("/v1/fim/completions")
    expect(seen.headers.authorization).toBe("Bearer upstream-secret")
    expect(JSON.stringify(seen.headers)).not.toContain(key)
    expect(seen.headers.cookie).toBeUndefined()
    expect(seen.headers["user-agent"]).toBe("workspace-api")
    expect(seen.body).toEqual({ model, prompt: "hello", suffix: "", stream: false })
  })

  it("passes the upstream's own 4xx through in the FIM format, and its refusal of our credentials as 502", async () => {
    const rejected = await failureOf(client.fim.complete({ model, prompt: "reject" }))
    expect((rejected as SDKError).statusCode).toBe(400)
    expect(JSON.parse((rejected as SDKError).body)).toMatchObject({ object: "error", message: "Prompt is not acceptable upstream", type: "invalid_request_error" })
    const unprocessable = await failureOf(client.fim.complete({ model, prompt: "unprocessable" }))
    expect(unprocessable).toBeInstanceOf(HTTPValidationError)
    expect(JSON.parse((unprocessable as HTTPValidationError).body)).toMatchObject({
      object: "error",
      param: "temperature",
      message: "temperature: Input should be less than or equal to 1.5"
    })
    const forbidden = await failureOf(client.fim.complete({ model, prompt: "forbid" }))
    expect((forbidden as SDKError).statusCode).toBe(502)
    expect((forbidden as SDKError).body).not.toContain("upstream-secret")
    expect((forbidden as SDKError).body).not.toContain(upstream.url)
  })

  it("refuses a JSON answer with a null finish_reason (the library would reject it) with 502", async () => {
    const failure = await failureOf(client.fim.complete({ model, prompt: "null-finish" }))
    expect((failure as SDKError).statusCode).toBe(502)
  })

  it("gives every streamed choice its finish_reason key, null until the last", async () => {
    expect(await readStream(await client.fim.stream({ model, prompt: "no-finish-key" }))).toBe("done")
  })

  it("answers 504 when the upstream sends no headers in time, and 502 when it cannot be reached", async () => {
    const timedOut = await failureOf(client.fim.complete({ model, prompt: "hang" }))
    expect((timedOut as SDKError).statusCode).toBe(504)
    const unreachable = await startApp({ UPSTREAM_PROVIDER_C_EU_URL: "http://127.0.0.1:9", UPSTREAM_PROVIDER_C_EU_KEY: "x" }, { stores: "postgres" })
    try {
      const workspace = await createWorkspace(unreachable)
      const otherKey = (await createKey(unreachable, workspace.id, ["COMPLETION_API"])).key
      const refused = new ProviderCClient({ apiKey: otherKey, serverURL: `${unreachable.url}/provider_c/eu` })
      const failure = await failureOf(refused.fim.complete({ model, prompt: "hi" }))
      expect((failure as SDKError).statusCode).toBe(502)
      expect((failure as SDKError).body).not.toContain("127.0.0.1")
    } finally {
      await unreachable.stop()
    }
  })

  /** The raw bytes of a stream (the library hides them): the text, and whether it ended cleanly or broke. */
  const rawStream = async (prompt: string) => {
    const response = await fetch(`${app.url}/provider_c/eu/v1/fim/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, prompt, stream: true })
    })
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
    return { text, ending }
  }

  it("cuts a stream that goes silent: the in-band error chunk arrives, then the connection breaks", async () => {
    const { ending, text } = await rawStream("stall")
    expect(ending).toBeInstanceOf(Error)
    expect(text).toContain('"content":"b"')
    expect(text).toContain('data: {"object":"error","message":"The upstream provider did not answer in time.","type":"server_error","param":null,"code":"upstream_timeout"}')
    expect(text).not.toContain("[DONE]")
    expect(await failureOf(readStream(await client.fim.stream({ model, prompt: "stall" })))).toBeInstanceOf(Error)
  })

  it("does not pass a stream that closes before [DONE] off as complete: an error chunk, then the cut", async () => {
    const { ending, text } = await rawStream("truncated")
    expect(ending).toBeInstanceOf(Error)
    expect(text).toContain('"content":"b"')
    expect(text).toContain('"code":"upstream_malformed"')
    expect(text).not.toContain("[DONE]")
    expect(await failureOf(readStream(await client.fim.stream({ model, prompt: "truncated" })))).toBeInstanceOf(Error)
  })

  it("relays the upstream's own in-band error, then cuts the connection", async () => {
    const { ending, text } = await rawStream("in-band")
    expect(ending).toBeInstanceOf(Error)
    expect(text).toContain('"content":"a"')
    expect(text).toContain('data: {"object":"error","message":"Upstream broke mid-stream","type":"server_error","param":null,"code":"3000"}')
    expect(await failureOf(readStream(await client.fim.stream({ model, prompt: "in-band" })))).toBeInstanceOf(Error)
    const failed = await eventually(
      () => query<{ outcome: string }>(app.env.DATABASE_URL!, "SELECT outcome FROM api_requests WHERE workspace_id = $1 AND stream AND outcome = 'failed'", [workspaceId]),
      (rows) => rows.length >= 2
    )
    expect(failed.length).toBeGreaterThanOrEqual(2)
  })

  it("aborts the upstream request as soon as the client breaks out of the stream, and records the cancellation", async () => {
    const before = upstream.closedEarly()
    let received = 0
    for await (const _event of await client.fim.stream({ model, prompt: "slow" })) {
      if (++received === 3) break
    }
    await eventually(() => upstream.closedEarly(), (closed) => closed === before + 1, 2_000)
    const rows = await eventually(
      () =>
        query<{ outcome: string; output_tokens: number }>(
          app.env.DATABASE_URL!,
          "SELECT outcome, output_tokens FROM api_requests WHERE workspace_id = $1 AND outcome = 'cancelled'",
          [workspaceId]
        ),
      (r) => r.length > 0
    )
    expect(rows[0]!.output_tokens).toBeGreaterThanOrEqual(3)
  })
})
