import ProviderBClient from "@anthropic-ai/sdk"
import { beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../support/fakeUpstream"
import { type MemoryApp, useApp, createKey, createWorkspace } from "../support/app"

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)
const model = "assistantmodel-sonnet-4-5-20250929"
const messages = [{ role: "user" as const, content: "How many tokens does this question take?" }]

const endpointsRecorded = (app: MemoryApp, workspaceId: string) =>
  [...(app.usage.workspaces.get(workspaceId)?.requests.values() ?? [])].map((row) => row.endpoint)

// anthropic.messages.countTokens() against the service, on the in-memory app with the built-in simulator upstream.
describe("messages token counting (POST /provider_b/{region}/v1/messages/count_tokens)", () => {
  const app = useApp()
  let workspaceId = ""
  let client: ProviderBClient

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    workspaceId = workspace.id
    const { key } = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    client = new ProviderBClient({ apiKey: key, baseURL: `${app.current.url}/provider_b/eu`, maxRetries: 0 })
  })

  it("counts what a message of the same request reports as its input; only the message is in the usage ledger", async () => {
    const { data: counted, response } = await client.messages.countTokens({ model, messages, system: "Answer briefly." }).withResponse()
    const message = await client.messages.create({ model, max_tokens: 30, messages, system: "Answer briefly." })
    expect(counted).toEqual({ input_tokens: message.usage.input_tokens })
    expect(response.headers.get("x-request-id")).toMatch(/^req_/)
    // One request spent, no tokens: the token budget is where it was before the count.
    expect(response.headers.get("anthropic-ratelimit-tokens-remaining")).toBe(response.headers.get("anthropic-ratelimit-tokens-limit"))
    expect(Number(response.headers.get("anthropic-ratelimit-requests-remaining"))).toBe(
      Number(response.headers.get("anthropic-ratelimit-requests-limit")) - 1
    )
    const recorded = await eventually(() => Promise.resolve(endpointsRecorded(app.current, workspaceId)), (rows) => rows.length >= 1)
    expect(recorded).toEqual(["messages"])
  })

  it("refuses in the messages format: an unknown model (naming the list), no messages, a bad beta header, an unknown region", async () => {
    const unknown = await failureOf(client.messages.countTokens({ model: "assistantmodel-0", messages }))
    expect(unknown).toBeInstanceOf(ProviderBClient.NotFoundError)
    expect((unknown as InstanceType<typeof ProviderBClient.NotFoundError>).error).toMatchObject({
      type: "error",
      error: { type: "not_found_error", message: expect.stringContaining("listed at GET /provider_b/eu/v1/models.") }
    })
    const empty = await failureOf(client.messages.countTokens({ model, messages: [] }))
    expect(empty).toBeInstanceOf(ProviderBClient.BadRequestError)
    expect((empty as Error).message).toContain("messages must contain at least one message.")
    const beta = await failureOf(client.messages.countTokens({ model, messages }, { headers: { "anthropic-beta": "a b" } }))
    expect(beta).toBeInstanceOf(ProviderBClient.BadRequestError)
    const region = await failureOf(
      new ProviderBClient({ apiKey: client.apiKey, baseURL: `${app.current.url}/provider_b/mars`, maxRetries: 0 }).messages.countTokens({ model, messages })
    )
    expect(region).toBeInstanceOf(ProviderBClient.NotFoundError)
    const denied = await failureOf(
      new ProviderBClient({ apiKey: "wsk_" + "x".repeat(43), baseURL: client.baseURL, maxRetries: 0 }).messages.countTokens({ model, messages })
    )
    expect(denied).toBeInstanceOf(ProviderBClient.AuthenticationError)
  })

  it("counts against the workspace's messages request limit", async () => {
    const limited = await createWorkspace(app.current, "Limited", { rateLimits: { families: { messages: { requestsPerMinute: 2 } } } })
    const { key } = await createKey(app.current, limited.id, ["COMPLETION_API"])
    const limitedClient = new ProviderBClient({ apiKey: key, baseURL: client.baseURL, maxRetries: 0 })
    await limitedClient.messages.countTokens({ model, messages })
    await limitedClient.messages.countTokens({ model, messages })
    const third = await failureOf(limitedClient.messages.countTokens({ model, messages }))
    expect(third).toBeInstanceOf(ProviderBClient.RateLimitError)
    expect(endpointsRecorded(app.current, limited.id)).toEqual([])
  })
})
