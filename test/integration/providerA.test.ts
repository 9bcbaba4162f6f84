import ProviderAClient from "openai"
import { beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database"
import { eventually } from "../support/fakeUpstream"
import { createKey, createWorkspace, type RunningApp, useApp } from "../support/app"

interface UsageRow {
  endpoint: string
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

const user = (content: string) => [{ role: "user" as const, content }]

describe("provider_a through the openai client library", () => {
  const app = useApp({}, { stores: "postgres" })
  let client: ProviderAClient
  let workspaceId: string

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    workspaceId = workspace.id
    const key = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    client = new ProviderAClient({ apiKey: key.key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
  })

  it("creates a chat completion with every field of the spec, and records its usage", async () => {
    const completion = await client.chat.completions.create({ model: "chatgen-4o", messages: user("Say something kind.") })
    expect(completion).toMatchObject({ object: "chat.completion", model: "chatgen-4o" })
    expect(completion.id).toMatch(/^chatcmpl-/)
    expect(Number.isInteger(completion.created)).toBe(true)
    expect(completion.system_fingerprint).toEqual(expect.any(String))
    expect(completion.choices[0]!.finish_reason).toBe("stop")
    expect(completion.choices[0]!.message.content!.length).toBeGreaterThan(0)
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens)

    const { data, response } = await client.chat.completions.create({ model: "chatgen-4o-mini", messages: user("x") }).withResponse()
    expect(response.headers.get("x-request-id")).toMatch(/^req_/)
    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.some((row) => row.request_id === response.headers.get("x-request-id")))
    const row = rows.find((r) => r.request_id === response.headers.get("x-request-id"))!
    expect(row).toMatchObject({
      endpoint: "chat_completions",
      model: "chatgen-4o-mini",
      region: "eu",
      status: 200,
      outcome: "completed",
      stream: false,
      input_tokens: data.usage!.prompt_tokens,
      output_tokens: data.usage!.completion_tokens
    })
    // 0.15 and 0.6 dollars per million tokens for this model in config/prices.json.
    expect(Number(row.cost_usd)).toBeCloseTo((data.usage!.prompt_tokens * 0.15 + data.usage!.completion_tokens * 0.6) / 1e6, 8)
  })

  it("streams chunks with for-await, the same text as without streaming, and usage only when asked", async () => {
    const prompt = user("Tell me about rivers.")
    const whole = await client.chat.completions.create({ model: "chatgen-4o", messages: prompt })
    const chunks = []
    for await (const chunk of await client.chat.completions.create({ model: "chatgen-4o", messages: prompt, stream: true })) chunks.push(chunk)
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true)
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(whole.choices[0]!.message.content)
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop")
    expect(chunks.some((c) => c.usage)).toBe(false)
    expect(chunks.some((c) => "usage" in c)).toBe(false)

    const withUsage = []
    for await (const chunk of await client.chat.completions.create({
      model: "chatgen-4o",
      messages: prompt,
      stream: true,
      stream_options: { include_usage: true }
    })) withUsage.push(chunk)
    expect(withUsage.at(-1)!.choices).toEqual([])
    expect(withUsage.at(-1)!.usage).toEqual(whole.usage)

    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.filter((row) => row.stream).length >= 2)
    // The usage the client never saw is recorded all the same.
    expect(rows.filter((row) => row.stream).every((row) => row.output_tokens === whole.usage!.completion_tokens)).toBe(true)
  })

  it("serves the stream helper's final completion", async () => {
    const stream = client.chat.completions.stream({ model: "chatgen-4o", messages: user("Hello!") })
    const final = await stream.finalChatCompletion()
    expect(final.choices[0]!.message.role).toBe("assistant")
    expect(final.choices[0]!.finish_reason).toBe("stop")
    expect(final.choices[0]!.message.content!.length).toBeGreaterThan(0)
  })

  const tools: Array<ProviderAClient.Chat.Completions.ChatCompletionTool> = [{
    type: "function",
    function: {
      name: "get_weather",
      description: "Weather of a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
    }
  }]

  it("round-trips tool calls, in JSON and streamed", async () => {
    const messages: Array<ProviderAClient.Chat.Completions.ChatCompletionMessageParam> = user("What is the weather in Lyon?")
    const first = await client.chat.completions.create({ model: "chatgen-4.1", messages, tools })
    expect(first.choices[0]!.finish_reason).toBe("tool_calls")
    const call = first.choices[0]!.message.tool_calls![0]!
    expect(call.type).toBe("function")
    const args = JSON.parse(call.type === "function" ? call.function.arguments : "{}") as { city: unknown }
    expect(typeof args.city).toBe("string")

    const streamed = await client.chat.completions.stream({ model: "chatgen-4.1", messages, tools }).finalChatCompletion()
    expect(streamed.choices[0]!.message.tool_calls![0]).toMatchObject({ type: "function", function: { name: "get_weather" } })

    const answer = await client.chat.completions.create({
      model: "chatgen-4.1",
      tools,
      messages: [...messages, first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: '{"celsius":21}' }]
    })
    expect(answer.choices[0]!.finish_reason).toBe("stop")
    expect(answer.choices[0]!.message.content!.length).toBeGreaterThan(0)
  })

  it("answers json_object requests with a JSON object", async () => {
    const completion = await client.chat.completions.create({
      model: "chatgen-4o",
      response_format: { type: "json_object" },
      messages: [{ role: "system", content: "Answer in JSON." }, ...user("Give me a user record.")]
    })
    const parsed = JSON.parse(completion.choices[0]!.message.content!) as unknown
    expect(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)).toBe(true)
  })

  it("accepts the unsupported n, service_tier and parallel_tool_calls without failing", async () => {
    const completion = await client.chat.completions.create({
      model: "chatgen-4o",
      messages: user("hi"),
      n: 3,
      service_tier: "flex",
      parallel_tool_calls: false
    })
    expect(completion.choices).toHaveLength(1)
  })

  it("returns embeddings as the library decodes them by default (base64) and as floats, inputs in order", async () => {
    const inputs = ["first text", "second text", "third"]
    const decoded = await client.embeddings.create({ model: "text-embedding-ada-002", input: inputs })
    const floats = await client.embeddings.create({ model: "text-embedding-ada-002", input: inputs, encoding_format: "float" })
    expect(decoded.data.map((d) => d.index)).toEqual([0, 1, 2])
    expect(decoded.data.every((d) => d.embedding.length === 1536)).toBe(true)
    for (const [i, item] of floats.data.entries()) {
      expect(item.embedding.length).toBe(1536)
      // base64 carries float32: equal to the float answer within float32 precision.
      item.embedding.forEach((value, j) => expect(decoded.data[i]!.embedding[j]).toBeCloseTo(value, 6))
    }
    expect(floats.data[0]!.embedding).not.toEqual(floats.data[1]!.embedding)
    const tokens = await client.embeddings.create({ model: "text-embedding-ada-002", input: [[1, 2, 3], [4, 5]], encoding_format: "float" })
    expect(tokens.data).toHaveLength(2)
    expect(decoded.usage.prompt_tokens).toBeGreaterThan(0)

    // A float answer is tens of kilobytes: its usage is read from its tail, and recorded as given.
    const { data: large, response } = await client.embeddings.create({ model: "text-embedding-ada-002", input: inputs, encoding_format: "float" }).withResponse()
    const requestId = response.headers.get("x-request-id")
    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.some((row) => row.request_id === requestId))
    expect(rows.find((row) => row.request_id === requestId)).toMatchObject({ endpoint: "embeddings", status: 200, input_tokens: large.usage.prompt_tokens, output_tokens: 0 })
  })

  it("refuses embeddings over 8192 tokens naming the input, other models, and dimensions", async () => {
    const long = "token ".repeat(9000)
    const tooLong = await client.embeddings.create({ model: "text-embedding-ada-002", input: ["short", long] }).catch((e: unknown) => e)
    expect(tooLong).toBeInstanceOf(ProviderAClient.BadRequestError)
    expect((tooLong as InstanceType<typeof ProviderAClient.BadRequestError>).param).toBe("input[1]")
    const withinTokens = await client.embeddings.create({ model: "text-embedding-ada-002", input: "word ".repeat(8000) })
    expect(withinTokens.data).toHaveLength(1)
    const dimensions = await client.embeddings.create({ model: "text-embedding-ada-002", input: "x", dimensions: 256 }).catch((e: unknown) => e)
    expect(dimensions).toBeInstanceOf(ProviderAClient.BadRequestError)
    expect((dimensions as InstanceType<typeof ProviderAClient.BadRequestError>).param).toBe("dimensions")
    const otherModel = await client.embeddings.create({ model: "text-embedding-3-small", input: "x" }).catch((e: unknown) => e)
    expect(otherModel).toBeInstanceOf(ProviderAClient.NotFoundError)
  })

  it("maps errors to the library's classes: 400, 401, 404, 429, 502", async () => {
    const bad = await client.chat.completions.create({ model: "chatgen-4o", messages: user("x"), temperature: 2.5 }).catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(ProviderAClient.BadRequestError)
    expect((bad as InstanceType<typeof ProviderAClient.APIError>).param).toBe("temperature")
    const badRole = await client.chat.completions.create({
      model: "chatgen-4o",
      messages: [{ role: "robot", content: "x" } as never]
    }).catch((e: unknown) => e)
    expect((badRole as InstanceType<typeof ProviderAClient.APIError>).param).toBe("messages[0].role")
    const tooManyStops = await client.chat.completions.create({ model: "chatgen-4o", messages: user("x"), stop: ["a", "b", "c", "d", "e"] })
      .catch((e: unknown) => e)
    expect((tooManyStops as InstanceType<typeof ProviderAClient.APIError>).param).toBe("stop")

    const unauthenticated = new ProviderAClient({ apiKey: "wsk_" + "x".repeat(43), baseURL: client.baseURL, maxRetries: 0 })
    expect(await unauthenticated.chat.completions.create({ model: "chatgen-4o", messages: user("x") }).catch((e: unknown) => e))
      .toBeInstanceOf(ProviderAClient.AuthenticationError)

    const unknownModel = await client.chat.completions.create({ model: "chatgen-9", messages: user("x") }).catch((e: unknown) => e)
    expect(unknownModel).toBeInstanceOf(ProviderAClient.NotFoundError)
    expect((unknownModel as InstanceType<typeof ProviderAClient.APIError>).message).toContain("chatgen-9")
    const wrongRegion = new ProviderAClient({ apiKey: client.apiKey, baseURL: client.baseURL.replace("/eu/", "/asia/"), maxRetries: 0 })
    expect(await wrongRegion.chat.completions.create({ model: "chatgen-4o", messages: user("x") }).catch((e: unknown) => e))
      .toBeInstanceOf(ProviderAClient.NotFoundError)

    const limited = await client.chat.completions.create({ model: "chatgen-4o", messages: user("[simulator fault=rate_limit]") })
      .catch((e: unknown) => e)
    expect(limited).toBeInstanceOf(ProviderAClient.RateLimitError)
    expect((limited as InstanceType<typeof ProviderAClient.APIError>).headers?.get("retry-after")).toEqual(expect.any(String))

    const broken = await client.chat.completions.create({ model: "chatgen-4o", messages: user("[simulator fault=server_error]") })
      .catch((e: unknown) => e)
    expect(broken).toBeInstanceOf(ProviderAClient.InternalServerError)
    expect((broken as InstanceType<typeof ProviderAClient.APIError>).status).toBe(502)
    // Any upstream status: 4xx pass through with their status (an unusual one as 400), 5xx become 502.
    const unprocessable = await client.chat.completions.create({ model: "chatgen-4o", messages: user("[simulator status=422]") })
      .catch((e: unknown) => e)
    expect(unprocessable).toBeInstanceOf(ProviderAClient.UnprocessableEntityError)
    const teapot = await client.chat.completions.create({ model: "chatgen-4o", messages: user("[simulator status=418]") })
      .catch((e: unknown) => e)
    expect((teapot as InstanceType<typeof ProviderAClient.APIError>).status).toBe(400)
    expect((teapot as Error).message).toContain("Simulated status 418")
    const unavailable = await client.chat.completions.create({ model: "chatgen-4o", messages: user("[simulator status=503]") })
      .catch((e: unknown) => e)
    expect((unavailable as InstanceType<typeof ProviderAClient.APIError>).status).toBe(502)
    const garbled = await client.chat.completions.create({ model: "chatgen-4o", messages: user("[simulator fault=malformed_body]") })
      .catch((e: unknown) => e)
    expect((garbled as InstanceType<typeof ProviderAClient.APIError>).status).toBe(502)

    // The recorder writes in batches, so wait until every status has arrived, not only the first.
    const failedStatuses = (r: ReadonlyArray<UsageRow>) => r.filter((row) => row.outcome === "failed").map((row) => row.status)
    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => [429, 502].every((status) => failedStatuses(r).includes(status)))
    expect(failedStatuses(rows)).toEqual(expect.arrayContaining([429, 502]))
  })

  it("reports an upstream failure in the middle of a stream as an error, not as a clean end", async () => {
    for (const fault of ["mid_stream_error", "mid_stream_abort"]) {
      const stream = await client.chat.completions.create({
        model: "chatgen-4o",
        messages: user(`[simulator fault=${fault} fault_after=3] go`),
        stream: true
      })
      const outcome = await (async () => {
        for await (const _chunk of stream) {
          // read until it breaks
        }
        return "completed"
      })().catch((e: unknown) => e)
      expect(outcome, fault).toBeInstanceOf(Error)
    }
    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.some((row) => row.stream && row.outcome === "failed"))
    expect(rows.some((row) => row.stream && row.outcome === "failed" && row.status === 200)).toBe(true)
  })

  it("sends a reasoning model's max_tokens upstream as max_completion_tokens, which the provider requires", async () => {
    // The simulator, like the provider, refuses max_tokens for o3: this succeeds only because the service rewrites it.
    const completion = await client.chat.completions.create({
      model: "o3",
      messages: user("[simulator output_tokens=200] Tell a long story."),
      max_tokens: 5
    })
    expect(completion.object).toBe("chat.completion")
    expect(completion.choices[0]?.finish_reason).toBe("length")
    expect(completion.usage?.completion_tokens).toBe(5)
    const streamed = await client.chat.completions.create({ model: "chatgen-5", messages: user("hi"), max_tokens: 20, stream: true })
    for await (const _chunk of streamed) { /* drained: no error means the upstream took it */ }
  })
})
