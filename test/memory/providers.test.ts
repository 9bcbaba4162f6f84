import ProviderBClient from "@anthropic-ai/sdk"
import { Mistral as ProviderCClient } from "@mistralai/mistralai"
import { SDKError } from "@mistralai/mistralai/models/errors"
import ProviderAClient from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ApiRequestRow } from "../../src/services/usage/3-UsageLedger/contract"
import { eventually } from "../support/fakeUpstream"
import { type MemoryApp, startApp, useApp, createKey, createWorkspace } from "../support/app"

const user = (content: string) => [{ role: "user" as const, content }]
const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

/** The request rows the in-memory ledger holds for a workspace, in insertion order. */
const usageRows = (app: MemoryApp, workspaceId: string): Promise<ReadonlyArray<ApiRequestRow>> =>
  Promise.resolve([...(app.usage.workspaces.get(workspaceId)?.requests.values() ?? [])])

// The three providers through their official client libraries, on the in-memory app with the built-in
// simulator upstream: what test/integration/provider{A,B,C}.test.ts check over PostgreSQL, in brief.
describe("forwarded requests on the in-memory app", () => {
  const app = useApp()
  let workspaceId = ""
  let key = ""

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    workspaceId = workspace.id
    key = (await createKey(app.current, workspace.id, ["COMPLETION_API"])).key
  })

  it("chat completions with the openai client: JSON and stream, usage recorded", async () => {
    const client = new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
    const { data: completion, response } = await client.chat.completions.create({ model: "chatgen-4o-mini", messages: user("Say something kind.") })
      .withResponse()
    expect(completion).toMatchObject({ object: "chat.completion", model: "chatgen-4o-mini" })
    expect(completion.choices[0]!.finish_reason).toBe("stop")
    expect(completion.choices[0]!.message.content!.length).toBeGreaterThan(0)
    const requestId = response.headers.get("x-request-id")
    expect(requestId).toMatch(/^req_/)

    let streamed = ""
    let chunks = 0
    const stream = await client.chat.completions.create({ model: "chatgen-4o-mini", messages: user("Say something kind."), stream: true })
    for await (const chunk of stream) {
      chunks++
      streamed += chunk.choices[0]?.delta.content ?? ""
    }
    expect(chunks).toBeGreaterThan(1)
    expect(streamed.length).toBeGreaterThan(0)

    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.filter((row) => row.endpoint === "chat_completions").length >= 2)
    const row = rows.find((r) => r.requestId === requestId)!
    expect(row).toMatchObject({
      endpoint: "chat_completions",
      provider: "provider_a",
      model: "chatgen-4o-mini",
      region: "eu",
      status: 200,
      outcome: "completed",
      stream: false,
      inputTokens: completion.usage!.prompt_tokens,
      outputTokens: completion.usage!.completion_tokens
    })
    expect(row.costUsd).toBeGreaterThan(0)
    expect(rows.some((r) => r.endpoint === "chat_completions" && r.stream && r.outcome === "completed")).toBe(true)
  })

  it("refuses in the openai format: a bad field names its param, an unknown model is 404", async () => {
    const client = new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
    const bad = await failureOf(client.chat.completions.create({ model: "chatgen-4o", messages: user("x"), temperature: 2.5 }))
    expect(bad).toBeInstanceOf(ProviderAClient.BadRequestError)
    expect((bad as InstanceType<typeof ProviderAClient.APIError>).param).toBe("temperature")
    const unknownModel = await failureOf(client.chat.completions.create({ model: "chatgen-9", messages: user("x") }))
    expect(unknownModel).toBeInstanceOf(ProviderAClient.NotFoundError)
    expect((unknownModel as InstanceType<typeof ProviderAClient.APIError>).message).toContain("chatgen-9")
    const unauthenticated = new ProviderAClient({ apiKey: "wsk_" + "x".repeat(43), baseURL: client.baseURL, maxRetries: 0 })
    expect(await failureOf(unauthenticated.chat.completions.create({ model: "chatgen-4o", messages: user("x") })))
      .toBeInstanceOf(ProviderAClient.AuthenticationError)
  })

  it("messages with the @anthropic-ai/sdk client: JSON and stream; refusals in its error format", async () => {
    const client = new ProviderBClient({ apiKey: key, baseURL: `${app.current.url}/provider_b/eu`, maxRetries: 0 })
    const model = "assistantmodel-sonnet-4-5-20250929"
    const message = await client.messages.create({ model, max_tokens: 100, messages: user("Tell me about rivers.") })
    expect(message).toMatchObject({ type: "message", role: "assistant", model })
    expect(message.content[0]).toMatchObject({ type: "text", text: expect.any(String) })
    const final = await client.messages.stream({ model, max_tokens: 100, messages: user("Tell me about rivers.") }).finalMessage()
    expect(final.type).toBe("message")
    expect(final.usage.output_tokens).toBeGreaterThan(0)

    type ApiError = InstanceType<typeof ProviderBClient.APIError>
    const unknownModel = await failureOf(client.messages.create({ model: "assistantmodel-9", max_tokens: 10, messages: user("x") }))
    expect(unknownModel).toBeInstanceOf(ProviderBClient.NotFoundError)
    expect((unknownModel as ApiError).type).toBe("not_found_error")
    const unauthenticated = new ProviderBClient({ apiKey: "wsk_" + "x".repeat(43), baseURL: client.baseURL, maxRetries: 0 })
    const denied = await failureOf(unauthenticated.messages.create({ model, max_tokens: 10, messages: user("x") }))
    expect(denied).toBeInstanceOf(ProviderBClient.AuthenticationError)
    expect((denied as ApiError).type).toBe("authentication_error")

    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.filter((row) => row.endpoint === "messages").length >= 2)
    expect(rows.filter((row) => row.endpoint === "messages").map((row) => [row.provider, row.stream, row.status])).toEqual(
      expect.arrayContaining([["provider_b", false, 200], ["provider_b", true, 200]])
    )
  })

  it("FIM with the @mistralai/mistralai client: JSON and stream; refusals in its error format", async () => {
    const client = new ProviderCClient({ apiKey: key, serverURL: `${app.current.url}/provider_c/eu` })
    const model = "codemodel-2501"
    const completion = await client.fim.complete({ model, prompt: "def fibonacci(n: int) -> int:\n", suffix: "\n\nprint(fibonacci(10))\n" })
    expect(completion.model).toBe(model)
    expect(completion.choices[0]!.finishReason).toBe("stop")
    expect(typeof completion.choices[0]!.message?.content).toBe("string")
    let text = ""
    for await (const event of await client.fim.stream({ model, prompt: "def add(a, b):\n" })) {
      for (const choice of event.data.choices) if (typeof choice.delta.content === "string") text += choice.delta.content
    }
    expect(text.length).toBeGreaterThan(0)

    const tooMuch = await failureOf(client.fim.complete({ model, prompt: "x", maxTokens: 300_000 }))
    expect(tooMuch).toBeInstanceOf(SDKError)
    expect((tooMuch as SDKError).statusCode).toBe(400)
    expect(JSON.parse((tooMuch as SDKError).body)).toMatchObject({ object: "error", param: "max_tokens", code: "context_length_exceeded" })

    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.some((row) => row.endpoint === "fim_completions"))
    expect(rows.find((row) => row.endpoint === "fim_completions")).toMatchObject({
      provider: "provider_c",
      model,
      status: 200,
      inputTokens: completion.usage.promptTokens,
      outputTokens: completion.usage.completionTokens
    })
  })

  it("rate limits from RateLimiter.memory: a workspace's own limit refuses with 429 in the client's format", async () => {
    const limited = await createWorkspace(app.current, "Limited", { rateLimits: { families: { chat_completions: { requestsPerMinute: 1 } } } })
    const limitedKey = (await createKey(app.current, limited.id, ["COMPLETION_API"])).key
    const client = new ProviderAClient({ apiKey: limitedKey, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
    const { response } = await client.chat.completions.create({ model: "chatgen-4o", messages: user("x") }).withResponse()
    expect(response.headers.get("x-ratelimit-limit-requests")).toBe("1")
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("0")
    const refused = await failureOf(client.chat.completions.create({ model: "chatgen-4o", messages: user("x") }))
    expect(refused).toBeInstanceOf(ProviderAClient.RateLimitError)
    expect(Number((refused as InstanceType<typeof ProviderAClient.APIError>).headers?.get("retry-after"))).toBeGreaterThanOrEqual(1)
  })
})


// The HttpApi path of the forwarded endpoints (the lane off), on the same in-memory stores.
describe("forwarded requests on the in-memory app without the forwarding lane", () => {
  let app: MemoryApp

  beforeAll(async () => {
    app = await startApp({}, { forwardingLane: false })
  })
  afterAll(() => app.stop())

  it("answers chat completions and refusals in the openai format through the HttpApi app", async () => {
    const workspace = await createWorkspace(app)
    const key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
    const client = new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 })
    const completion = await client.chat.completions.create({ model: "chatgen-4o-mini", messages: user("hi") })
    expect(completion).toMatchObject({ object: "chat.completion", model: "chatgen-4o-mini" })
    const bad = await failureOf(client.chat.completions.create({ model: "chatgen-4o", messages: user("x"), temperature: 2.5 }))
    expect(bad).toBeInstanceOf(ProviderAClient.BadRequestError)
    expect((bad as InstanceType<typeof ProviderAClient.APIError>).param).toBe("temperature")
    const rows = await eventually(() => usageRows(app, workspace.id), (r) => r.length > 0)
    expect(rows[0]).toMatchObject({ endpoint: "chat_completions", status: 200, outputTokens: completion.usage!.completion_tokens })
  })
})
