import { Mistral as ProviderCClient } from "@mistralai/mistralai"
import { HTTPClient } from "@mistralai/mistralai/lib/http.js"
import { HTTPValidationError, SDKError } from "@mistralai/mistralai/models/errors"
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
}

const usageRows = (app: RunningApp, workspaceId: string) =>
  query<UsageRow>(app.env.DATABASE_URL!, "SELECT * FROM api_requests WHERE workspace_id = $1 ORDER BY id", [workspaceId])

const model = "codemodel-2501"
const prompt = "def fibonacci(n: int) -> int:\n"
const suffix = "\n\nprint(fibonacci(10))\n"

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

/** Reads a whole FIM stream: the concatenated content and every chunk's choices. */
const readStream = async (stream: AsyncIterable<{ data: { choices: Array<{ delta: { content?: unknown }; finishReason: string | null }> } }>) => {
  let text = ""
  const finishReasons: Array<string | null> = []
  for await (const event of stream) {
    for (const choice of event.data.choices) {
      if (typeof choice.delta.content === "string") text += choice.delta.content
      finishReasons.push(choice.finishReason)
    }
  }
  return { text, finishReasons }
}

describe("provider_c FIM completion through the provider's official client library", () => {
  const app = useApp({}, { stores: "postgres" })
  let client: ProviderCClient
  let key: string
  let workspaceId: string

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    workspaceId = workspace.id
    key = (await createKey(app.current, workspace.id, ["COMPLETION_API"])).key
    client = new ProviderCClient({ apiKey: key, serverURL: `${app.current.url}/provider_c/eu` })
  })

  it("completes with fim.complete: every field of the spec, a non-null finish_reason, and usage recorded", async () => {
    const completion = await client.fim.complete({ model, prompt, suffix })
    expect(completion.id).toEqual(expect.any(String))
    expect(completion.object).toEqual(expect.any(String))
    expect(completion.model).toBe(model)
    expect(Number.isInteger(completion.created)).toBe(true)
    expect(completion.usage.totalTokens).toBe(completion.usage.promptTokens! + completion.usage.completionTokens!)
    expect(completion.usage.promptTokens).toBeGreaterThan(0)
    const choice = completion.choices[0]!
    expect(choice.index).toBe(0)
    expect(choice.finishReason).toBe("stop")
    expect(choice.message).toMatchObject({ role: "assistant", prefix: false })
    expect(typeof choice.message?.content).toBe("string")
    expect((choice.message?.content as string).length).toBeGreaterThan(0)

    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.length > 0)
    expect(rows[0]).toMatchObject({
      endpoint: "fim_completions",
      provider: "provider_c",
      model,
      region: "eu",
      status: 200,
      outcome: "completed",
      stream: false,
      input_tokens: completion.usage.promptTokens,
      output_tokens: completion.usage.completionTokens
    })
    // 0.3 and 0.9 dollars per million tokens for this model in config/prices.json.
    expect(Number(rows[0]!.cost_usd)).toBeCloseTo((completion.usage.promptTokens! * 0.3 + completion.usage.completionTokens! * 0.9) / 1e6, 8)
  })

  it("takes every parameter of the spec, and continues the prompt without a suffix", async () => {
    const completion = await client.fim.complete({
      model,
      prompt,
      suffix,
      temperature: 1.5,
      topP: 0.9,
      maxTokens: 16,
      minTokens: 1,
      randomSeed: 42,
      stop: ["\n\n\n"]
    })
    expect(completion.usage.completionTokens).toBeLessThanOrEqual(16)
    expect(["stop", "length"]).toContain(completion.choices[0]!.finishReason)
    const again = await client.fim.complete({ model, prompt, suffix, temperature: 1.5, topP: 0.9, maxTokens: 16, minTokens: 1, randomSeed: 42, stop: ["\n\n\n"] })
    expect(again.choices[0]!.message?.content).toBe(completion.choices[0]!.message?.content)

    const short = await client.fim.complete({ model, prompt, maxTokens: 2 })
    expect(short.choices[0]!.finishReason).toBe("length")
    expect(short.usage.completionTokens).toBeLessThanOrEqual(2)
    const stopped = await client.fim.complete({ model, prompt: "[simulator reply=echo] alpha beta END gamma", stop: "END" })
    expect(stopped.choices[0]!.message?.content).not.toContain("gamma")
    const none = await client.fim.complete({ model, prompt, maxTokens: 0 })
    expect(none.choices[0]!.finishReason).toEqual(expect.any(String))
  })

  it("uses codemodel-2501 when the request names no model", async () => {
    // The library always sends a model: a hook takes it out, as a client of the bare protocol may.
    const withoutModel = new HTTPClient().addHook("beforeRequest", async (request) => {
      const body = (await request.clone().json()) as Record<string, unknown>
      delete body.model
      return new Request(request, { body: JSON.stringify(body) })
    })
    const bare = new ProviderCClient({ apiKey: key, serverURL: client._options.serverURL!, httpClient: withoutModel })
    const completion = await bare.fim.complete({ model: "", prompt })
    expect(completion.model).toBe(model)
    const streamed = await readStream(await bare.fim.stream({ model: "", prompt }))
    expect(streamed.finishReasons.at(-1)).toBe("stop")
  })

  it("streams with fim.stream: data-only chunks each with a finish_reason key, the same text, ending at [DONE]", async () => {
    const request = { model, prompt, suffix, randomSeed: 7 }
    const whole = await client.fim.complete(request)
    const streamed = await readStream(await client.fim.stream(request))
    expect(streamed.text).toBe(whole.choices[0]!.message?.content)
    expect(streamed.finishReasons.slice(0, -1).every((reason) => reason === null)).toBe(true)
    expect(streamed.finishReasons.at(-1)).toBe("stop")

    const thisStream = (row: UsageRow) => row.stream && row.input_tokens === whole.usage.promptTokens
    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.some(thisStream))
    expect(rows.find(thisStream)).toMatchObject({ endpoint: "fim_completions", outcome: "completed", output_tokens: whole.usage.completionTokens })
  })

  it("refuses out-of-range parameters with 400 naming the field, in the FIM error format", async () => {
    const cases: Array<[Parameters<ProviderCClient["fim"]["complete"]>[0], string]> = [
      [{ model, prompt, temperature: 1.6 }, "temperature"],
      [{ model, prompt, topP: 1.1 }, "top_p"],
      [{ model, prompt, maxTokens: -1 }, "max_tokens"],
      [{ model, prompt, minTokens: -1 }, "min_tokens"],
      [{ model, prompt, randomSeed: -1 }, "random_seed"]
    ]
    for (const [request, field] of cases) {
      const failure = await failureOf(client.fim.complete(request))
      expect(failure, field).toBeInstanceOf(SDKError)
      const error = failure as SDKError
      expect(error.statusCode, field).toBe(400)
      const body = JSON.parse(error.body) as Record<string, unknown>
      expect(body, field).toMatchObject({ object: "error", type: "invalid_request_error", param: field })
      expect(body.message, field).toEqual(expect.stringContaining(field))
    }
  })

  it("keeps prompt plus max_tokens within the model's context length (256,000 tokens)", async () => {
    // About four characters a token: 4,000 characters are 1,000 tokens.
    const longPrompt = "x".repeat(4_000)
    const tooMuch = await failureOf(client.fim.complete({ model, prompt: longPrompt, maxTokens: 255_001 }))
    expect((tooMuch as SDKError).statusCode).toBe(400)
    expect(JSON.parse((tooMuch as SDKError).body)).toMatchObject({ param: "max_tokens", code: "context_length_exceeded" })
    expect((tooMuch as SDKError).message).toContain("256000")
    const hugePrompt = await failureOf(client.fim.complete({ model, prompt: "x".repeat(1_024_004) }))
    expect(JSON.parse((hugePrompt as SDKError).body)).toMatchObject({ param: "prompt", code: "context_length_exceeded" })
    // Within the context, the request goes on (short, so the rate limits let it through).
    expect((await client.fim.complete({ model, prompt: longPrompt, maxTokens: 8 })).choices[0]!.finishReason).toEqual(expect.any(String))
  })

  it("answers other models, other regions, bad keys and upstream failures with the matching status", async () => {
    const otherModel = await failureOf(client.fim.complete({ model: "codemodel-latest", prompt }))
    expect((otherModel as SDKError).statusCode).toBe(400)
    expect(JSON.parse((otherModel as SDKError).body)).toMatchObject({ param: "model", code: "invalid_model" })
    expect((otherModel as SDKError).message).toContain("codemodel-latest")

    const us = new ProviderCClient({ apiKey: key, serverURL: `${app.current.url}/provider_c/us` })
    const wrongRegion = await failureOf(us.fim.complete({ model, prompt }))
    expect(wrongRegion).toBeInstanceOf(SDKError)
    expect((wrongRegion as SDKError).statusCode).toBe(404)
    expect(JSON.parse((wrongRegion as SDKError).body)).toMatchObject({ object: "error", type: "not_found_error", param: "region" })

    const stranger = new ProviderCClient({ apiKey: "wsk_" + "x".repeat(43), serverURL: client._options.serverURL! })
    expect(((await failureOf(stranger.fim.complete({ model, prompt }))) as SDKError).statusCode).toBe(401)

    const limited = await failureOf(client.fim.complete({ model, prompt: "[simulator fault=rate_limit]" }))
    expect((limited as SDKError).statusCode).toBe(429)
    expect((limited as SDKError).headers.get("retry-after")).toEqual(expect.any(String))
    for (const fault of ["server_error", "overloaded", "malformed_body"]) {
      const failure = await failureOf(client.fim.complete({ model, prompt: `[simulator fault=${fault}]` }))
      expect((failure as SDKError).statusCode, fault).toBe(502)
    }
    // The upstream's own validation status passes through; the library reads it as its validation error.
    const unprocessable = await failureOf(client.fim.complete({ model, prompt: "[simulator status=422]" }))
    expect(unprocessable).toBeInstanceOf(HTTPValidationError)

    const failedStatuses = (r: ReadonlyArray<UsageRow>) => r.filter((row) => row.outcome === "failed").map((row) => row.status)
    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => [429, 502, 422].every((status) => failedStatuses(r).includes(status)))
    expect(failedStatuses(rows)).toEqual(expect.arrayContaining([429, 502, 422]))
  })

  it("counts requests against the workspace's FIM limit, with rate-limit headers", async () => {
    const limited = await createWorkspace(app.current, "Limited", { rateLimits: { families: { fim: { requestsPerMinute: 1 } } } })
    const limitedClient = new ProviderCClient({ apiKey: (await createKey(app.current, limited.id, ["COMPLETION_API"])).key, serverURL: client._options.serverURL! })
    await limitedClient.fim.complete({ model, prompt })
    const refused = await failureOf(limitedClient.fim.complete({ model, prompt }))
    expect((refused as SDKError).statusCode).toBe(429)
    expect(JSON.parse((refused as SDKError).body)).toMatchObject({ object: "error", type: "rate_limit_error" })
    expect((refused as SDKError).headers.get("retry-after")).toEqual(expect.any(String))
    expect((refused as SDKError).headers.get("x-ratelimit-limit-requests")).toBe("1")
  })

  it("reports an upstream failure in the middle of a stream as an error, not as a clean end", async () => {
    for (const fault of ["mid_stream_error", "mid_stream_abort"]) {
      const outcome = await failureOf(readStream(await client.fim.stream({ model, prompt: `[simulator fault=${fault} fault_after=3]\n${prompt}` })))
      expect(outcome, fault).toBeInstanceOf(Error)
    }
    const rows = await eventually(() => usageRows(app.current, workspaceId), (r) => r.filter((row) => row.stream && row.outcome === "failed").length >= 2)
    expect(rows.filter((row) => row.stream && row.outcome === "failed").every((row) => row.status === 200)).toBe(true)
  })
})
