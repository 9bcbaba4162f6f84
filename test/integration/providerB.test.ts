import ProviderBClient from "@anthropic-ai/sdk"
import { beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database"
import { eventually } from "../support/fakeUpstream"
import { createKey, createWorkspace, type RunningApp, useApp } from "../support/app"

interface UsageRow {
  endpoint: string
  provider: string
  model: string
  region: string
  status: number
  outcome: string
  stream: boolean
  input_tokens: number
  output_tokens: number
  cost_usd: string
  request_id: string | null
}

const usageRows = (app: RunningApp, workspaceId: string) =>
  query<UsageRow>(app.env.DATABASE_URL!, "SELECT * FROM api_requests WHERE workspace_id = $1 ORDER BY id", [workspaceId])

const model = "assistantmodel-sonnet-4-5-20250929"
const user = (content: string): Array<ProviderBClient.MessageParam> => [{ role: "user", content }]

/** A 1×1 transparent PNG. */
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

const tools: Array<ProviderBClient.Tool> = [{
  name: "get_weather",
  description: "Current weather of a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
}]

/** Parameters of the spec that this client version no longer types: it sends them as written. */
const sampling = { temperature: 0.5, top_k: 40, top_p: 0.9 }

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

describe("provider_b messages through the provider's official client library", () => {
  const app = useApp({}, { stores: "postgres" })
  let client: ProviderBClient
  let key: string
  let workspaceId: string

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    workspaceId = workspace.id
    key = (await createKey(app.current, workspace.id, ["COMPLETION_API"])).key
    client = new ProviderBClient({ apiKey: key, baseURL: `${app.current.url}/provider_b/eu`, maxRetries: 0 })
  })

  it("creates a message with every field of the spec, echoes the request id, and records its usage and cost", async () => {
    const { data: message, response } = await client.messages.create({
      model,
      max_tokens: 200,
      system: "You are terse.",
      messages: user("Say something kind."),
      stop_sequences: ["THE END"],
      ...sampling
    }).withResponse()
    expect(message).toMatchObject({ type: "message", role: "assistant", model, stop_sequence: null })
    expect(message.id).toMatch(/^msg_/)
    expect(message.stop_reason).toBe("end_turn")
    expect(message.content[0]).toMatchObject({ type: "text", text: expect.any(String) })
    expect(message.usage.input_tokens).toBeGreaterThan(0)
    expect(message.usage.output_tokens).toBeGreaterThan(0)
    const requestId = response.headers.get("request-id")
    expect(requestId).toEqual(expect.any(String))
    expect(response.headers.get("anthropic-ratelimit-requests-limit")).toEqual(expect.any(String))

    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.some((row) => row.request_id === requestId))
    const row = rows.find((r) => r.request_id === requestId)!
    expect(row).toMatchObject({
      endpoint: "messages",
      provider: "provider_b",
      model,
      region: "eu",
      status: 200,
      outcome: "completed",
      stream: false,
      input_tokens: message.usage.input_tokens,
      output_tokens: message.usage.output_tokens
    })
    // 3 and 15 dollars per million tokens for this model in config/prices.json.
    expect(Number(row.cost_usd)).toBeCloseTo((message.usage.input_tokens * 3 + message.usage.output_tokens * 15) / 1e6, 8)
  })

  it("serves the region us and every model of the spec, and stops at a stop sequence or max_tokens", async () => {
    const us = new ProviderBClient({ apiKey: key, baseURL: `${app.current.url}/provider_b/us`, maxRetries: 0 })
    for (const name of ["assistantmodel-sonnet-4-20250514", "assistantmodel-3-7-sonnet-20250219", "assistantmodel-3-5-sonnet-20240620"]) {
      expect((await us.messages.create({ model: name, max_tokens: 50, messages: user("hi") })).model).toBe(name)
    }
    const short = await client.messages.create({ model, max_tokens: 3, messages: user("Tell me a long story.") })
    expect(short.stop_reason).toBe("max_tokens")
    expect(short.usage.output_tokens).toBeLessThanOrEqual(3)
    const echoed = await client.messages.create({ model, max_tokens: 100, messages: user("[simulator reply=echo] one two STOP three"), stop_sequences: ["STOP"] })
    expect(echoed.stop_reason).toBe("stop_sequence")
    expect(echoed.stop_sequence).toBe("STOP")
  })

  it("takes the key as x-api-key too, and never fails on the client's anthropic-version or anthropic-beta", async () => {
    // What pre-1.0 clients send: the key in x-api-key and the old version.
    const xApiKey = new ProviderBClient({
      apiKey: null,
      authToken: null,
      baseURL: client.baseURL,
      maxRetries: 0,
      defaultHeaders: { "x-api-key": key, "anthropic-version": "2023-06-01" }
    })
    expect((await xApiKey.messages.create({ model, max_tokens: 20, messages: user("hi") })).type).toBe("message")
    const beta = new ProviderBClient({
      apiKey: key,
      baseURL: client.baseURL,
      maxRetries: 0,
      defaultHeaders: { "anthropic-version": "2099-12-31", "anthropic-beta": "some-future-feature-2099-01-01,another-one" }
    })
    expect((await beta.messages.create({ model, max_tokens: 20, messages: user("hi") })).type).toBe("message")
    const streamed = await beta.messages.stream({ model, max_tokens: 20, messages: user("hi") }).finalMessage()
    expect(streamed.type).toBe("message")
    // The library's beta namespace: betas go in anthropic-beta, and `?beta=true` on the path.
    const betaNamespace = await beta.beta.messages.create({ model, max_tokens: 20, messages: user("hi"), betas: ["some-beta-2099-01-01"] })
    expect(betaNamespace.type).toBe("message")

    const twoKeys = new ProviderBClient({ apiKey: key, baseURL: client.baseURL, maxRetries: 0, defaultHeaders: { "x-api-key": "wsk_other" } })
    expect(await failureOf(twoKeys.messages.create({ model, max_tokens: 20, messages: user("hi") }))).toBeInstanceOf(ProviderBClient.AuthenticationError)
  })

  it("streams the real event sequence, each event with its event: line, ping included", async () => {
    const response = await client.messages.create({ model, max_tokens: 200, messages: user("Tell me about rivers."), stream: true }).asResponse()
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    const text = await response.text()
    const events = text.split("\n\n").filter((block) => block.trim() !== "")
    const names = events.map((block) => /^event: (\S+)\n/.exec(block)?.[1])
    expect(names.every((name) => name !== undefined)).toBe(true)
    for (const block of events) {
      const name = /^event: (\S+)\n/.exec(block)![1]
      const data = JSON.parse(block.split("\n").find((line) => line.startsWith("data: "))!.slice(6)) as { type: string }
      expect(data.type).toBe(name)
    }
    expect(names[0]).toBe("message_start")
    expect(names).toContain("ping")
    expect(names.slice(-2)).toEqual(["message_delta", "message_stop"])
    expect(names).toEqual(expect.arrayContaining(["content_block_start", "content_block_delta", "content_block_stop"]))
  })

  it("streams with the stream helper: text events, the final message, and usage recorded as streamed", async () => {
    const prompt = user("Tell me about mountains.")
    // A model no other test streams with, to find this test's records.
    const streamModel = "assistantmodel-3-7-sonnet-20250219"
    const whole = await client.messages.create({ model: streamModel, max_tokens: 300, messages: prompt })
    const stream = client.messages.stream({ model: streamModel, max_tokens: 300, messages: prompt })
    const pieces: Array<string> = []
    stream.on("text", (piece) => void pieces.push(piece))
    const final = await stream.finalMessage()
    const wholeText = whole.content[0]!.type === "text" ? whole.content[0]!.text : ""
    expect(final.content).toHaveLength(1)
    expect(final.content[0]).toMatchObject({ type: "text", text: wholeText })
    expect(pieces.join("")).toBe(wholeText)
    expect(final.stop_reason).toBe("end_turn")
    expect(final.usage.output_tokens).toBe(whole.usage.output_tokens)
    expect(final.usage.input_tokens).toBe(whole.usage.input_tokens)

    const raw = []
    for await (const event of await client.messages.create({ model: streamModel, max_tokens: 300, messages: prompt, stream: true })) {
      raw.push(event.type)
    }
    expect(raw[0]).toBe("message_start")
    expect(raw.at(-1)).toBe("message_stop")

    const streamed = (row: UsageRow) => row.stream && row.model === streamModel
    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.filter(streamed).length >= 2)
    // The stream helper's and the raw iterator's: the usage of message_start and message_delta.
    for (const row of rows.filter(streamed)) {
      expect(row.outcome).toBe("completed")
      expect(row.output_tokens).toBe(whole.usage.output_tokens)
      expect(row.input_tokens).toBe(whole.usage.input_tokens)
    }
  })

  it("round-trips tool use: a tool_use block (JSON and streamed with input_json_delta), then a tool_result", async () => {
    const messages = user("What is the weather in Lyon?")
    const first = await client.messages.create({ model, max_tokens: 300, messages, tools })
    expect(first.stop_reason).toBe("tool_use")
    const call = first.content.find((block): block is ProviderBClient.ToolUseBlock => block.type === "tool_use")!
    expect(call.name).toBe("get_weather")
    expect(call.id).toMatch(/^toolu_/)
    expect(typeof (call.input as { city: unknown }).city).toBe("string")

    const streamed = client.messages.stream({ model, max_tokens: 300, messages, tools, tool_choice: { type: "tool", name: "get_weather" } })
    const partials: Array<string> = []
    streamed.on("inputJson", (partial) => void partials.push(partial))
    const final = await streamed.finalMessage()
    const streamedCall = final.content.find((block) => block.type === "tool_use")
    expect(streamedCall).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: expect.any(String) } })
    expect(partials.length).toBeGreaterThan(0)

    const answer = await client.messages.create({
      model,
      max_tokens: 300,
      tools,
      messages: [
        ...messages,
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "21 degrees and sunny" }] }
      ]
    })
    expect(answer.stop_reason).toBe("end_turn")
    expect(answer.content[0]!.type).toBe("text")

    const any = await client.messages.create({ model, max_tokens: 300, messages, tools, tool_choice: { type: "any" } })
    expect(any.stop_reason).toBe("tool_use")
  })

  it("forwards the provider's own tools (a versioned type, no input schema) next to custom ones", async () => {
    const withServerTool = await client.messages.create({
      model,
      max_tokens: 100,
      messages: user("Search the news"),
      tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 1 }, ...tools]
    })
    expect(withServerTool.type).toBe("message")
  })

  it("accepts base64 image blocks of the four media types, and refuses others and image URLs with 400", async () => {
    for (const media_type of ["image/png", "image/jpeg", "image/gif", "image/webp"] as const) {
      const message = await client.messages.create({
        model,
        max_tokens: 50,
        messages: [{
          role: "user",
          content: [{ type: "image", source: { type: "base64", media_type, data: pixel } }, { type: "text", text: "What is this?" }]
        }]
      })
      expect(message.type).toBe("message")
    }
    // A large image counts as one image, not by the length of its data: 400,000 characters are not 100,000 tokens.
    const large = await client.messages.create({
      model,
      max_tokens: 50,
      messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: pixel + "A".repeat(400_000) } }] }]
    })
    expect(large.type).toBe("message")
    const bmp = await failureOf(client.messages.create({
      model,
      max_tokens: 50,
      messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/bmp" as "image/png", data: pixel } }] }]
    }))
    expect(bmp).toBeInstanceOf(ProviderBClient.BadRequestError)
    expect((bmp as InstanceType<typeof ProviderBClient.BadRequestError>).type).toBe("invalid_request_error")
    expect((bmp as InstanceType<typeof ProviderBClient.BadRequestError>).apiMessage).toContain("image/bmp")
    const url = await failureOf(client.messages.create({
      model,
      max_tokens: 50,
      messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.test/cat.png" } }] }]
    }))
    expect(url).toBeInstanceOf(ProviderBClient.BadRequestError)
  })

  it("refuses invalid requests with 400 invalid_request_error naming the field", async () => {
    const cases: Array<[ProviderBClient.MessageCreateParamsNonStreaming, string]> = [
      [{ model, max_tokens: 10, messages: user("x"), ...{ temperature: 1.5 } }, "temperature"],
      [{ model, max_tokens: 10, messages: user("x"), ...{ top_p: 1.5 } }, "top_p"],
      [{ model, max_tokens: 10, messages: user("x"), ...{ top_k: -1 } }, "top_k"],
      [{ model, max_tokens: 0, messages: user("x") }, "max_tokens"],
      // Above the model's output limit (64,000): a 400 of its own, not a rate-limit refusal.
      [{ model, max_tokens: 64_001, messages: user("x") }, "max_tokens"],
      [{ model, messages: user("x") } as never, "max_tokens"],
      [{ model, max_tokens: 10, messages: [] }, "messages"],
      [{ model, max_tokens: 10, messages: [{ role: "assistant", content: "hi" }] }, "messages[0].role"],
      [{ model, max_tokens: 10, messages: [{ role: "system", content: "hi" } as never] }, "messages[0].role"],
      [{ model, max_tokens: 10, messages: user("x"), tools: [{ name: "f" } as never] }, "tools[0].input_schema"],
      [{ model, max_tokens: 10, messages: user("x"), tools, tool_choice: { type: "tool" } as never }, "tool_choice.name"],
      [{ model, max_tokens: 10, messages: user("x"), system: 5 as never }, "system"]
    ]
    for (const [body, field] of cases) {
      // An explicit timeout: without one the library refuses large max_tokens itself, before sending.
      const failure = await failureOf(client.messages.create(body, { timeout: 30_000 }))
      expect(failure, field).toBeInstanceOf(ProviderBClient.BadRequestError)
      const error = failure as InstanceType<typeof ProviderBClient.BadRequestError>
      expect(error.type, field).toBe("invalid_request_error")
      expect(error.apiMessage, field).toContain(field)
    }
    // The upstream's own refusal passes through in the same format.
    const unknownTool = await failureOf(client.messages.create({ model, max_tokens: 10, messages: user("x"), tools, tool_choice: { type: "tool", name: "nope" } }))
    expect(unknownTool).toBeInstanceOf(ProviderBClient.BadRequestError)
    expect((unknownTool as InstanceType<typeof ProviderBClient.BadRequestError>).apiMessage).toContain("nope")
  })

  it("maps failures to the library's error classes and the protocol's error types", async () => {
    type ApiError = InstanceType<typeof ProviderBClient.APIError>
    const unauthenticated = new ProviderBClient({ apiKey: "wsk_" + "x".repeat(43), baseURL: client.baseURL, maxRetries: 0 })
    const denied = await failureOf(unauthenticated.messages.create({ model, max_tokens: 10, messages: user("x") }))
    expect(denied).toBeInstanceOf(ProviderBClient.AuthenticationError)
    expect((denied as ApiError).type).toBe("authentication_error")

    const unknownModel = await failureOf(client.messages.create({ model: "assistantmodel-9", max_tokens: 10, messages: user("x") }))
    expect(unknownModel).toBeInstanceOf(ProviderBClient.NotFoundError)
    expect((unknownModel as ApiError).type).toBe("not_found_error")
    expect((unknownModel as ApiError).apiMessage).toContain("assistantmodel-9")
    const wrongRegion = new ProviderBClient({ apiKey: key, baseURL: `${app.current.url}/provider_b/asia`, maxRetries: 0 })
    expect(await failureOf(wrongRegion.messages.create({ model, max_tokens: 10, messages: user("x") }))).toBeInstanceOf(ProviderBClient.NotFoundError)

    const limited = await failureOf(client.messages.create({ model, max_tokens: 10, messages: user("[simulator fault=rate_limit]") }))
    expect(limited).toBeInstanceOf(ProviderBClient.RateLimitError)
    expect((limited as ApiError).type).toBe("rate_limit_error")
    expect((limited as ApiError).headers?.get("retry-after")).toEqual(expect.any(String))

    const overloaded = await failureOf(client.messages.create({ model, max_tokens: 10, messages: user("[simulator fault=overloaded]") }))
    expect(overloaded).toBeInstanceOf(ProviderBClient.OverloadedError)
    expect((overloaded as ApiError).status).toBe(529)
    expect((overloaded as ApiError).type).toBe("overloaded_error")
    expect((overloaded as ApiError).headers?.get("retry-after")).toEqual(expect.any(String))

    const broken = await failureOf(client.messages.create({ model, max_tokens: 10, messages: user("[simulator fault=server_error]") }))
    expect(broken).toBeInstanceOf(ProviderBClient.InternalServerError)
    expect((broken as ApiError).status).toBe(502)
    expect((broken as ApiError).type).toBe("api_error")
    const garbled = await failureOf(client.messages.create({ model, max_tokens: 10, messages: user("[simulator fault=malformed_body]") }))
    expect((garbled as ApiError).status).toBe(502)

    const failedStatuses = (r: ReadonlyArray<UsageRow>) => r.filter((row) => row.outcome === "failed").map((row) => row.status)
    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => [429, 529, 502].every((status) => failedStatuses(r).includes(status)))
    expect(failedStatuses(rows)).toEqual(expect.arrayContaining([429, 529, 502]))
  })

  it("reports an upstream failure in the middle of a stream as an error, not as a clean end", async () => {
    const midway = await failureOf(client.messages.stream({ model, max_tokens: 300, messages: user("[simulator fault=mid_stream_error fault_after=4] go") }).finalMessage())
    expect(midway).toBeInstanceOf(ProviderBClient.APIError)
    // The upstream's own in-band error reaches the client with its type.
    expect((midway as InstanceType<typeof ProviderBClient.APIError>).type).toBe("api_error")
    expect((midway as Error).message).toContain("interrupted")

    const cut = await failureOf(client.messages.stream({ model, max_tokens: 300, messages: user("[simulator fault=mid_stream_abort fault_after=4] go") }).finalMessage())
    expect(cut).toBeInstanceOf(Error)

    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.filter((row) => row.stream && row.outcome === "failed").length >= 2)
    expect(rows.filter((row) => row.stream && row.outcome === "failed").every((row) => row.status === 200)).toBe(true)
  })

  it("counts requests against the workspace's messages limit, with the protocol's rate-limit headers", async () => {
    const limited = await createWorkspace(app.current, "Limited", { rateLimits: { families: { messages: { requestsPerMinute: 1 } } } })
    const limitedClient = new ProviderBClient({ apiKey: (await createKey(app.current, limited.id, ["COMPLETION_API"])).key, baseURL: client.baseURL, maxRetries: 0 })
    const { response } = await limitedClient.messages.create({ model, max_tokens: 10, messages: user("x") }).withResponse()
    expect(response.headers.get("anthropic-ratelimit-requests-limit")).toBe("1")
    const refused = await failureOf(limitedClient.messages.create({ model, max_tokens: 10, messages: user("x") }))
    expect(refused).toBeInstanceOf(ProviderBClient.RateLimitError)
    expect((refused as InstanceType<typeof ProviderBClient.APIError>).type).toBe("rate_limit_error")
    expect((refused as InstanceType<typeof ProviderBClient.APIError>).headers?.get("retry-after")).toEqual(expect.any(String))
  })

  it("lets a workspace that brings its own keys use exactly its own model list", async () => {
    const own = await createWorkspace(app.current, "Own keys", { byokModels: { provider_b: ["assistantmodel-3-5-sonnet-20240620"] } })
    const ownKey = (await createKey(app.current, own.id, ["COMPLETION_API"])).key
    const ownClient = new ProviderBClient({ apiKey: ownKey, baseURL: client.baseURL, maxRetries: 0 })
    expect((await ownClient.messages.create({ model: "assistantmodel-3-5-sonnet-20240620", max_tokens: 10, messages: user("x") })).type).toBe("message")
    expect(await failureOf(ownClient.messages.create({ model, max_tokens: 10, messages: user("x") }))).toBeInstanceOf(ProviderBClient.NotFoundError)
  })
})
