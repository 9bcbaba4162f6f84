import { Context, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import ProviderAClient from "openai"
import { zodTextFormat } from "openai/helpers/zod"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { SimulatorAddress } from "../../src/simulator/server"
import { simulatorTestLayer } from "../simulator/harness"
import { call, createKey, createWorkspace, type MemoryApp, startApp, useApp } from "../support/app"
import { operatorCookie, consoleCall } from "../support/console"
import { eventually } from "../support/fakeUpstream"
import { tempDir } from "../support/tempDirs"
import { runExport } from "../support/usage"

// The Responses API through the gateway with the `openai` library, on the in-memory app with the built-in
// simulator upstream: create, stream, a function-call round trip, .parse, the stateless refusals, usage.

const model = "chatgen-4o-mini"

const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true
}

type BadRequest = InstanceType<typeof ProviderAClient.BadRequestError>

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

describe("POST /provider_a/{region}/v1/responses", () => {
  const app = useApp()
  let client: ProviderAClient
  let workspaceId: string
  let exportKey: string

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    workspaceId = workspace.id
    const { key } = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    exportKey = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
    client = new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
  })

  it("create: a response with its text and usage, the limits in the chat style", async () => {
    const { data: response, response: raw } = await client.responses.create({ model, instructions: "Be brief.", input: "Say hello" }).withResponse()
    expect(response.object).toBe("response")
    expect(response.status).toBe("completed")
    expect(response.output_text.length).toBeGreaterThan(0)
    // Stateless: sent upstream with store false (the simulator echoes it back).
    expect(response).toMatchObject({ store: false })
    expect(response.usage!.input_tokens).toBeGreaterThan(0)
    expect(raw.headers.get("x-ratelimit-limit-requests")).toBe("500")
    expect(raw.headers.get("x-ratelimit-limit-tokens")).toBe("60000")
  })

  it("stream: the events as the upstream sent them, and finalResponse()", async () => {
    const stream = client.responses.stream({ model, input: "Tell a short story" })
    const types: Array<string> = []
    let text = ""
    for await (const event of stream) {
      types.push(event.type)
      if (event.type === "response.output_text.delta") text += event.delta
    }
    const final = await stream.finalResponse()
    expect(types[0]).toBe("response.created")
    expect(types).toContain("response.output_text.done")
    expect(types.at(-1)).toBe("response.completed")
    expect(final.output_text).toBe(text)
    expect(final.usage!.output_tokens).toBeGreaterThan(0)
  })

  it("has its own rate limits, family responses, apart from chat completions': 429 in the chat format", async () => {
    const limited = await createWorkspace(app.current, "Limited", { rateLimits: { families: { responses: { requestsPerMinute: 1 } } } })
    const { key } = await createKey(app.current, limited.id, ["COMPLETION_API"])
    const own = new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
    await own.responses.create({ model, input: "One" })
    const refused = await failureOf(own.responses.create({ model, input: "Two" })) as InstanceType<typeof ProviderAClient.RateLimitError>
    expect(refused).toBeInstanceOf(ProviderAClient.RateLimitError)
    expect(refused.message).toContain("Responses API")
    expect(refused.headers?.get("x-ratelimit-limit-requests")).toBe("1")
    // Chat completions count in their own family.
    const chat = await own.chat.completions.create({ model, messages: [{ role: "user", content: "Three" }] })
    expect(chat.choices).toHaveLength(1)
  })

  it("a function-call round trip: the call, then the answer to its output", async () => {
    const first = await client.responses.create({ model, input: "Weather in Paris?", tools: [weatherTool] })
    const call = first.output.find((item) => item.type === "function_call")
    if (call?.type !== "function_call") throw new Error("no function call")
    expect(call.name).toBe("get_weather")
    expect(JSON.parse(call.arguments)).toEqual({ city: expect.any(String) })
    const second = await client.responses.create({
      model,
      tools: [weatherTool],
      input: [
        { role: "user", content: "Weather in Paris?" },
        { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: "function_call_output", call_id: call.call_id, output: "{\"celsius\":21}" }
      ]
    })
    expect(second.output_text.length).toBeGreaterThan(0)
  })

  it(".parse with a zod schema gives output_parsed matching it", async () => {
    const Forecast = z.object({ city: z.string(), celsius: z.number(), conditions: z.enum(["sunny", "cloudy", "rainy"]) })
    const parsed = await client.responses.parse({ model, input: "The forecast for Lyon", text: { format: zodTextFormat(Forecast, "forecast") } })
    expect(parsed.output_parsed).not.toBeNull()
    expect(Forecast.parse(parsed.output_parsed)).toEqual(parsed.output_parsed)
  })

  it("refuses what needs state, the hosted tools and bad fields: 400 naming the field in the chat error format", async () => {
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string, RegExp]> = [
      [{ store: true }, "store", /stateless.*input/],
      [{ previous_response_id: "resp_123" }, "previous_response_id", /stateless/],
      [{ conversation: "conv_123" }, "conversation", /stateless/],
      [{ background: true }, "background", /background/],
      [{ temperature: 2.5 }, "temperature", /between 0 and 2/],
      [{ top_p: -1 }, "top_p", /between 0 and 1/],
      [{ max_output_tokens: 1 }, "max_output_tokens", /16/],
      [{ tools: Array.from({ length: 129 }, (_, index) => ({ ...weatherTool, name: `tool_${index}` })) }, "tools", /at most 128/],
      [{ text: { format: { type: "json_schema", name: "bad name", schema: {} } } }, "text.format.name", /letters, digits/],
      [{ input: [{ type: "item_reference", id: "msg_1" }] }, "input[0].id", /stored upstream/],
      [{ metadata: { key: 5 } }, "metadata.key", /string/]
    ]
    for (const hosted of ["web_search", "web_search_preview", "file_search", "code_interpreter", "computer_use_preview", "image_generation", "mcp"]) {
      const failure = await failureOf(client.responses.create({ model, input: "x", tools: [{ type: hosted } as never] })) as BadRequest
      expect(failure, hosted).toBeInstanceOf(ProviderAClient.BadRequestError)
      expect(failure.param, hosted).toBe("tools[0].type")
      expect(failure.message, hosted).toContain(hosted)
    }
    for (const [fields, param, message] of cases) {
      const failure = await failureOf(client.responses.create({ model, input: "x", ...fields } as never)) as BadRequest
      expect(failure, param).toBeInstanceOf(ProviderAClient.BadRequestError)
      expect(failure.param, param).toBe(param)
      expect(failure.type, param).toBe("invalid_request_error")
      expect(failure.message, param).toMatch(message)
    }
    const unknown = await failureOf(client.responses.create({ model: "assistantmodel-sonnet-4-5-20250929", input: "x" })) as BadRequest
    expect(unknown).toBeInstanceOf(ProviderAClient.NotFoundError)
  })

  it("records usage with family responses: the models export and the console's usage by family", async () => {
    const response = await client.responses.create({ model: "chatgen-4.1-nano", input: "Count to three" })
    const usage = response.usage!
    const day = new Date().toISOString().slice(0, 10)
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
    const cookie = await operatorCookie(app.current)
    // Recorded off the request path: awaited by its model, which no other request here uses.
    await eventually(
      () => consoleCall(app.current, "GET", `/console/api/workspaces/${workspaceId}/usage?from=${day}&to=${tomorrow}&timezone=UTC&groupBy=model`, { cookie }),
      (answer) => answer.status === 200 && (answer.body.data as Array<{ group: string }>).some((row) => row.group === "chatgen-4.1-nano")
    )
    const byFamily = await eventually(
      () => consoleCall(app.current, "GET", `/console/api/workspaces/${workspaceId}/usage?from=${day}&to=${tomorrow}&timezone=UTC&groupBy=family`, { cookie }),
      (answer) => answer.status === 200 && (answer.body.data as Array<{ group: string }>).some((row) => row.group === "responses")
    )
    const row = (byFamily.body.data as Array<{ group: string; requests: number }>).find((found) => found.group === "responses")
    expect(row!.requests).toBeGreaterThanOrEqual(1)
    const exported = await runExport(app.current, exportKey, "models", {
      from: { date: `${day}T00:00:00`, timezone: "UTC" },
      to: { date: `${tomorrow}T00:00:00`, timezone: "UTC" }
    })
    expect(exported.status).toBe(200)
    const line = exported.lines!.find((found) => found.includes(",chatgen-4.1-nano,"))
    expect(line?.split(",").slice(2, 10)).toEqual(["api", "chatgen-4.1-nano", "provider_a", "eu", "1", "0", String(usage.input_tokens), String(usage.output_tokens)])
  })

  it("a failure inside the stream reaches the client as the error event, which the library raises", async () => {
    const stream = client.responses.stream({ model, input: "Tell a story [simulator fault=mid_stream_error fault_after=3]" })
    const failure = await failureOf((async () => {
      for await (const _event of stream) { /* until it fails */ }
    })())
    expect(failure).toBeInstanceOf(ProviderAClient.APIError)
    expect(String(failure)).toMatch(/interrupted/)
  })

  it("a stream the client leaves is billed for what was generated", async () => {
    const leftModel = "chatgen-4.1-mini"
    const stream = client.responses.stream({ model: leftModel, input: "Tell a long story [simulator chunk_delay_ms=100 output_tokens=400 chunk_tokens=4]" })
    let deltas = 0
    for await (const event of stream) {
      if (event.type === "response.output_text.delta" && ++deltas === 3) break
    }
    const day = new Date().toISOString().slice(0, 10)
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
    const cookie = await operatorCookie(app.current)
    const byModel = await eventually(
      () => consoleCall(app.current, "GET", `/console/api/workspaces/${workspaceId}/usage?from=${day}&to=${tomorrow}&timezone=UTC&groupBy=model`, { cookie }),
      (answer) => answer.status === 200 && (answer.body.data as Array<{ group: string }>).some((row) => row.group === leftModel)
    )
    const row = (byModel.body.data as Array<{ group: string; requests: number; inputTokens: number; outputTokens: number }>).find((found) => found.group === leftModel)!
    expect(row.requests).toBe(1)
    expect(row.inputTokens).toBeGreaterThan(0)
    // Three chunks of about four tokens were generated before the client left; far from the 400 asked for.
    expect(row.outputTokens).toBeGreaterThan(0)
    expect(row.outputTokens).toBeLessThan(100)
  })

  it("is described in the OpenAPI document", async () => {
    const document = await call(app.current, "GET", "/openapi.json")
    expect(Object.keys(document.body.paths)).toContain("/provider_a/{region}/v1/responses")
  })
})

describe("the Responses API on an azure deployment (/openai/v1, the deployment as model)", () => {
  const scope = Effect.runSync(Scope.make())
  const simulatorKey = "simulator-azure-key"
  let app: MemoryApp
  let client: ProviderAClient
  let exportKey: string

  beforeAll(async () => {
    const context = await Effect.runPromise(Layer.buildWithScope(simulatorTestLayer({ apiKey: Option.some(Redacted.make(simulatorKey)) }), scope))
    const simulator = Context.get(context, SimulatorAddress).baseUrl
    const file = path.join(tempDir("responses-azure-"), "upstreams.yaml")
    fs.writeFileSync(file, `
routes:
  provider_a/eu:
    - name: azure-sweden
      kind: azure
      url: ${simulator}
      apiVersion: "2024-10-21"
      auth: { apiKey: { env: AZURE_SE_KEY } }
      models:
        ${model}: chatgen-4o-mini-prod
`)
    app = await startApp({ UPSTREAMS_FILE: file, AZURE_SE_KEY: simulatorKey })
    const workspace = await createWorkspace(app)
    const { key } = await createKey(app, workspace.id, ["COMPLETION_API"])
    exportKey = (await createKey(app, workspace.id, ["USAGE_EXPORT_API"])).key
    client = new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 })
  })

  afterAll(async () => {
    await app?.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("answers JSON and streams from the deployment, not the built-in simulator", async () => {
    const { data: response, response: raw } = await client.responses.create({ model, input: "Say hello" }).withResponse()
    expect(response.output_text.length).toBeGreaterThan(0)
    expect(raw.headers.get("x-workspace-api-simulated")).toBeNull()
    const stream = client.responses.stream({ model, input: "Count to three" })
    for await (const _event of stream) { /* drained */ }
    expect((await stream.finalResponse()).status).toBe("completed")
    // Both recorded with the deployment that answered (the models export's last column).
    const day = new Date().toISOString().slice(0, 10)
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
    const exported = await eventually(
      () => runExport(app, exportKey, "models", { from: { date: `${day}T00:00:00`, timezone: "UTC" }, to: { date: `${tomorrow}T00:00:00`, timezone: "UTC" } }),
      (answer) => answer.status === 200 && (answer.lines ?? []).some((line) => line.includes(`,${model},provider_a,eu,2,`))
    )
    expect(exported.lines!.find((line) => line.includes(`,${model},`))!.split(",").at(-1)).toBe("azure-sweden")
  })
})
