import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import ProviderAClient, { AzureOpenAI } from "openai"
import { SimulatorAddress } from "../../../src/simulator/server"
import { collectAsync, failureOf, simulatorTestLayer } from "../harness"

const key = "azure-test-key"
const apiVersion = "2024-10-21"

/** The classic deployments API: the model named in a call is the deployment. */
const classicClient = (apiKey = key) =>
  Effect.map(SimulatorAddress, ({ baseUrl }) => new AzureOpenAI({ endpoint: baseUrl, apiKey, apiVersion, maxRetries: 0 }))

/** The /openai/v1 API, through the plain client: the key as a bearer token. */
const v1Client = (apiKey = key) =>
  Effect.map(SimulatorAddress, ({ baseUrl }) => new ProviderAClient({ baseURL: `${baseUrl}/openai/v1`, apiKey, maxRetries: 0 }))

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
  }
}

const post = (url: string, headers: Record<string, string>, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> }
  })

describe("the azure kind's simulator", () => {
  layer(simulatorTestLayer({ apiKey: Option.some(Redacted.make(key)) }), { excludeTestServices: true })((it) => {
    it.effect("answers a chat completion on a classic deployment, with the filter verdicts", () =>
      Effect.gen(function* () {
        const client = yield* classicClient()
        const { data, response } = yield* Effect.promise(() =>
          client.chat.completions
            .create({ model: "chatgen-4o-prod", messages: [{ role: "user", content: "Say something" }] })
            .withResponse()
        )
        expect(response.url).toContain("/openai/deployments/chatgen-4o-prod/chat/completions?api-version=2024-10-21")
        expect(data.object).toBe("chat.completion")
        expect(data.model).toBe("chatgen-4o")
        expect(data.choices[0]?.message.content?.length).toBeGreaterThan(0)
        const raw = data as unknown as { prompt_filter_results: Array<unknown>; choices: Array<{ content_filter_results: unknown }> }
        expect(raw.prompt_filter_results).toHaveLength(1)
        expect(raw.choices[0]?.content_filter_results).toMatchObject({ hate: { filtered: false, severity: "safe" } })
      })
    )

    it.effect("streams on a classic deployment: the prompt-filter chunk first, usage last", () =>
      Effect.gen(function* () {
        const client = yield* classicClient()
        const stream = yield* Effect.promise(() =>
          client.chat.completions.create({
            model: "chatgen-4o-mini-eu",
            messages: [{ role: "user", content: "Stream please" }],
            stream: true,
            stream_options: { include_usage: true }
          })
        )
        const chunks = yield* collectAsync(stream)
        const first = chunks[0] as unknown as { choices: Array<unknown>; prompt_filter_results?: Array<unknown> }
        expect(first.choices).toEqual([])
        expect(first.prompt_filter_results).toHaveLength(1)
        const text = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? "")).join("")
        expect(text.length).toBeGreaterThan(0)
        const withText = chunks.find((chunk) => (chunk.choices[0]?.delta.content ?? "") !== "")
        expect((withText?.choices[0] as unknown as { content_filter_results: unknown }).content_filter_results).toMatchObject({
          violence: { filtered: false }
        })
        const last = chunks[chunks.length - 1]!
        expect(last.choices).toEqual([])
        expect(last.usage?.completion_tokens).toBeGreaterThan(0)
        // The library's stream helper reads it whole, the filter chunk included.
        const final = yield* Effect.promise(() =>
          client.chat.completions
            .stream({ model: "chatgen-4o-mini-eu", messages: [{ role: "user", content: "Stream please" }], stream_options: { include_usage: true } })
            .finalChatCompletion()
        )
        expect(final.choices[0]?.message.content).toBe(text)
      })
    )

    it.effect("calls a tool on both APIs", () =>
      Effect.gen(function* () {
        for (const client of [yield* classicClient(), yield* v1Client()]) {
          const completion = yield* Effect.promise(() =>
            client.chat.completions.create({
              model: "chatgen-4.1-prod",
              messages: [{ role: "user", content: "Weather in Lyon?" }],
              tools: [weatherTool],
              tool_choice: "required"
            })
          )
          expect(completion.choices[0]?.finish_reason).toBe("tool_calls")
          const call = completion.choices[0]?.message.tool_calls?.[0]
          expect(call?.type === "function" ? call.function.name : undefined).toBe("get_weather")
        }
      })
    )

    it.effect("answers embeddings on both APIs, without filter verdicts", () =>
      Effect.gen(function* () {
        for (const client of [yield* classicClient(), yield* v1Client()]) {
          const result = yield* Effect.promise(() =>
            client.embeddings.create({ model: "text-embedding-3-small-prod", input: ["one text", "another"] })
          )
          expect(result.data).toHaveLength(2)
          expect(result.data[0]?.embedding).toHaveLength(1536)
          expect(result.model).toBe("text-embedding-3-small")
          expect(result.usage.prompt_tokens).toBeGreaterThan(0)
        }
      })
    )

    it.effect("answers chat on the v1 API with the deployment as model, the key as a bearer or as api-key", () =>
      Effect.gen(function* () {
        const client = yield* v1Client()
        const completion = yield* Effect.promise(() =>
          client.chat.completions.create({ model: "chatgen-4o-prod", messages: [{ role: "user", content: "Hello" }] })
        )
        expect(completion.model).toBe("chatgen-4o")
        const chunks = yield* collectAsync(
          yield* Effect.promise(() =>
            client.chat.completions.create({
              model: "chatgen-4o-prod",
              messages: [{ role: "user", content: "Hello" }],
              stream: true,
              stream_options: { include_usage: true }
            })
          )
        )
        expect(chunks[0]?.choices).toEqual([])
        expect(chunks[chunks.length - 1]?.usage?.prompt_tokens).toBeGreaterThan(0)
        const { baseUrl } = yield* SimulatorAddress
        const withApiKey = yield* post(`${baseUrl}/openai/v1/chat/completions`, { "api-key": key }, {
          model: "chatgen-4o-prod",
          messages: [{ role: "user", content: "Hello" }]
        })
        expect(withApiKey.status).toBe(200)
      })
    )

    it.effect("refuses a filtered prompt with a 400 content_filter the library reads as BadRequestError", () =>
      Effect.gen(function* () {
        const client = yield* classicClient()
        const error = yield* failureOf(() =>
          client.chat.completions.create({ model: "chatgen-4o-prod", messages: [{ role: "user", content: "[simulator fault=content_filter]" }] })
        )
        expect(error).toBeInstanceOf(ProviderAClient.BadRequestError)
        const refused = error as InstanceType<typeof ProviderAClient.BadRequestError>
        expect(refused.status).toBe(400)
        expect(refused.code).toBe("content_filter")
        expect(refused.param).toBe("prompt")
        const body = refused.error as { innererror?: { code: string; content_filter_result: Record<string, { filtered: boolean }> } }
        expect(body.innererror?.code).toBe("ResponsibleAIPolicyViolation")
        expect(body.innererror?.content_filter_result.violence?.filtered).toBe(true)
        const v1 = yield* v1Client()
        const onV1 = yield* failureOf(() =>
          v1.chat.completions.create({ model: "chatgen-4o-prod", messages: [{ role: "user", content: "[simulator fault=content_filter]" }] })
        )
        expect((onV1 as InstanceType<typeof ProviderAClient.BadRequestError>).code).toBe("content_filter")
      })
    )

    it.effect("refuses a wrong key with 401 on both APIs, and a bearer on the classic API", () =>
      Effect.gen(function* () {
        for (const client of [yield* classicClient("wrong-key"), yield* v1Client("wrong-key")]) {
          const error = yield* failureOf(() =>
            client.chat.completions.create({ model: "chatgen-4o-prod", messages: [{ role: "user", content: "Hello" }] })
          )
          expect(error).toBeInstanceOf(ProviderAClient.AuthenticationError)
          expect((error as InstanceType<typeof ProviderAClient.AuthenticationError>).code).toBe("401")
        }
        const { baseUrl } = yield* SimulatorAddress
        const bearer = yield* post(`${baseUrl}/openai/deployments/chatgen-4o-prod/chat/completions?api-version=${apiVersion}`, {
          authorization: `Bearer ${key}`
        }, { messages: [{ role: "user", content: "Hello" }] })
        expect(bearer.status).toBe(401)
      })
    )

    it.effect("answers as the cloud without an api-version, with an unknown one, and for an unknown deployment", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* SimulatorAddress
        const body = { messages: [{ role: "user", content: "Hello" }] }
        const classicUrl = `${baseUrl}/openai/deployments/chatgen-4o-prod/chat/completions`
        const missing = yield* post(classicUrl, { "api-key": key }, body)
        expect(missing.status).toBe(404)
        expect(missing.body).toEqual({ error: { code: "404", message: "Resource not found" } })
        const unknown = yield* post(`${classicUrl}?api-version=yesterday`, { "api-key": key }, body)
        expect(unknown.status).toBe(400)
        expect(unknown.body).toEqual({ error: { code: "BadRequest", message: "API version not supported" } })
        const nowhere = yield* post(`${baseUrl}/openai/deployments/nothing-here/chat/completions?api-version=${apiVersion}`, { "api-key": key }, body)
        expect(nowhere.status).toBe(404)
        expect((nowhere.body.error as { code: string }).code).toBe("DeploymentNotFound")
      })
    )

    it.effect("answers 429 with retry-after-ms and retry-after, in the cloud's error shape", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* SimulatorAddress
        const limited = yield* post(
          `${baseUrl}/openai/deployments/chatgen-4o-prod/chat/completions?api-version=${apiVersion}`,
          { "api-key": key, "x-simulator-fault": "rate_limit", "x-simulator-retry-after-ms": "2500" },
          { messages: [{ role: "user", content: "Hello" }] }
        )
        expect(limited.status).toBe(429)
        expect(limited.headers.get("retry-after-ms")).toBe("2500")
        expect(limited.headers.get("retry-after")).toBe("3")
        expect(limited.body).toEqual({ error: { code: "429", message: expect.any(String) } })
      })
    )

    it.effect("answers the Responses API under /openai/v1 only, the deployment as model, JSON and stream", () =>
      Effect.gen(function*() {
        const client = yield* v1Client()
        const response = yield* Effect.promise(() => client.responses.create({ model: "chatgen-4o-prod", input: "Say hello", store: false }))
        expect(response.model).toBe("chatgen-4o")
        expect(response.output_text.length).toBeGreaterThan(0)
        const stream = client.responses.stream({ model: "chatgen-4o-prod", input: "Say hello" })
        const events = yield* collectAsync(stream)
        expect(events.at(-1)?.type).toBe("response.completed")
        const unknown = yield* failureOf(() => client.responses.create({ model: "nobody-prod", input: "x" }))
        expect(unknown).toBeInstanceOf(ProviderAClient.NotFoundError)
      }))
  })
})
