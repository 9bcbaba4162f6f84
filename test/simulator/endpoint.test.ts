import ProviderBClient from "@anthropic-ai/sdk"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import ProviderAClient from "openai"
import { SimulatorAddress } from "../../src/simulator/server"
import { failureOf, simulatorTestLayer } from "./harness"
import { createHash } from "node:crypto"

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

const chatBody = JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] })

const post = (path: string, body: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  Effect.flatMap(SimulatorAddress, ({ baseUrl }) =>
    Effect.tryPromise({
      try: () => fetch(`${baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body, signal }),
      catch: (error) => error
    })
  )

const errorCodeOf = (response: Response) =>
  Effect.promise(async () => ((await response.json()) as { readonly error: { readonly code: string | null } }).error.code)

const providerAClient = (options: { readonly maxRetries?: number } = {}) =>
  Effect.map(SimulatorAddress, ({ baseUrl }) => new ProviderAClient({ baseURL: `${baseUrl}/v1`, apiKey: "k", maxRetries: options.maxRetries ?? 0 }))

describe("simulated faults and timing", () => {
  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("answers 429 with retry hints, in the provider's error format", () =>
      Effect.gen(function* () {
        const response = yield* post("/v1/chat/completions", chatBody, { "x-simulator-fault": "rate_limit", "x-simulator-retry-after-ms": "2500" })
        expect(response.status).toBe(429)
        expect(response.headers.get("retry-after")).toBe("3")
        expect(response.headers.get("retry-after-ms")).toBe("2500")
        expect(yield* errorCodeOf(response)).toBe("rate_limit_exceeded")
      })
    )

    it.effect("fails the first attempts and then succeeds, so client retries get through", () =>
      Effect.gen(function* () {
        const providerA = yield* providerAClient({ maxRetries: 2 })
        const completion = yield* Effect.promise(() =>
          providerA.chat.completions.create({
            model: "chatgen-4o",
            messages: [{ role: "user", content: "retry me [simulator fault=rate_limit fault_times=2 retry_after_ms=10]" }]
          })
        )
        expect(completion.choices[0]?.finish_reason).toBe("stop")
        const withoutRetries = yield* providerAClient()
        const refused = yield* failureOf(() =>
          withoutRetries.chat.completions.create({
            model: "chatgen-4o",
            messages: [{ role: "user", content: "never [simulator fault=server_error]" }]
          })
        )
        expect(refused).toBeInstanceOf(ProviderAClient.InternalServerError)
      })
    )

    it.effect("answers overload as 529 on provider_b", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* SimulatorAddress
        const sdk = new ProviderBClient({ baseURL: baseUrl, apiKey: "k", maxRetries: 0 })
        const overloaded = yield* failureOf(() =>
          sdk.messages.create(
            { model: "assistantmodel-sonnet-4-20250514", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
            { headers: { "x-simulator-fault": "overloaded" } }
          )
        )
        expect((overloaded as InstanceType<typeof ProviderBClient.APIError>).status).toBe(529)
        expect((overloaded as InstanceType<typeof ProviderBClient.APIError>).type).toBe("overloaded_error")
      })
    )

    it.effect("drops the connection in the middle of a stream", () =>
      Effect.gen(function* () {
        const providerA = yield* providerAClient()
        const received: Array<string> = []
        const failure = yield* failureOf(async () => {
          const stream = await providerA.chat.completions.create(
            { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], stream: true },
            { headers: { "x-simulator-fault": "mid_stream_abort", "x-simulator-fault-after": "3", "x-simulator-output-tokens": "50" } }
          )
          for await (const chunk of stream) received.push(chunk.id)
        })
        expect(received).toHaveLength(3)
        expect(String(failure)).toMatch(/terminated|aborted|closed|socket/i)
      })
    )

    it.effect("sends the in-band error event before dropping a messages stream", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* SimulatorAddress
        const sdk = new ProviderBClient({ baseURL: baseUrl, apiKey: "k", maxRetries: 0 })
        const failure = yield* failureOf(async () => {
          const stream = await sdk.messages.create(
            { model: "assistantmodel-sonnet-4-20250514", max_tokens: 100, messages: [{ role: "user", content: "hi" }], stream: true },
            { headers: { "x-simulator-fault": "mid_stream_error", "x-simulator-fault-after": "4" } }
          )
          for await (const _event of stream) {
            // consume until the error surfaces
          }
        })
        expect(failure).toBeInstanceOf(ProviderBClient.APIError)
        expect((failure as InstanceType<typeof ProviderBClient.APIError>).type).toBe("api_error")
      })
    )

    it.effect("cuts a JSON body in the middle when a mid-stream fault hits a non-streaming answer", () =>
      Effect.gen(function* () {
        const response = yield* post("/v1/chat/completions", chatBody, { "x-simulator-fault": "mid_stream_abort" })
        expect(response.status).toBe(200)
        const body = yield* Effect.either(Effect.tryPromise(() => response.text()))
        expect(body._tag).toBe("Left")
      })
    )

    it.effect("stalls a stream: events, then silence with the connection open", () =>
      Effect.gen(function* () {
        const controller = new AbortController()
        const response = yield* post(
          "/v1/chat/completions",
          JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], stream: true }),
          { "x-simulator-fault": "stall", "x-simulator-fault-after": "1" },
          controller.signal
        )
        const reader = response.body!.getReader()
        const first = yield* Effect.promise(() => reader.read())
        expect(new TextDecoder().decode(first.value)).toMatch(/^data: /)
        const next = yield* Effect.promise(() =>
          Promise.race([reader.read().then(() => "data"), new Promise((resolve) => setTimeout(() => resolve("silence"), 300))])
        )
        expect(next).toBe("silence")
        controller.abort()
      })
    )

    it.effect("hangs before the headers, and resets the connection", () =>
      Effect.gen(function* () {
        const hung = yield* Effect.flip(post("/v1/chat/completions", chatBody, { "x-simulator-fault": "hang" }, AbortSignal.timeout(300)))
        expect((hung as Error).name).toMatch(/TimeoutError|AbortError/)
        const reset = yield* Effect.flip(post("/v1/chat/completions", chatBody, { "x-simulator-fault": "reset" }))
        expect(String(reset)).toMatch(/fetch failed/)
      })
    )

    it.effect("answers like a broken proxy: an HTML 502, or a 200 whose JSON is cut", () =>
      Effect.gen(function* () {
        const badGateway = yield* post("/v1/chat/completions", chatBody, { "x-simulator-fault": "bad_gateway" })
        expect(badGateway.status).toBe(502)
        expect(badGateway.headers.get("content-type")).toMatch(/text\/html/)
        const malformed = yield* post("/v1/chat/completions", chatBody, { "x-simulator-fault": "malformed_body" })
        expect(malformed.status).toBe(200)
        const text = yield* Effect.promise(() => malformed.text())
        expect(() => JSON.parse(text)).toThrow()
      })
    )

    it.effect("answers a stream as a misconfigured upstream may: JSON, an HTML page, gzip unasked", () =>
      Effect.gen(function* () {
        const streamBody = JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], stream: true })
        const json = yield* post("/v1/chat/completions", streamBody, { "x-simulator-fault": "ignore_stream" })
        expect(json.status).toBe(200)
        expect(json.headers.get("content-type")).toMatch(/application\/json/)
        expect(((yield* Effect.promise(() => json.json())) as { object: string }).object).toBe("chat.completion")
        const page = yield* post("/v1/chat/completions", streamBody, { "x-simulator-fault": "html_page" })
        expect(page.status).toBe(200)
        expect(page.headers.get("content-type")).toMatch(/text\/html/)
        // fetch decodes gzip itself: the header says what was sent.
        const gzip = yield* post("/v1/chat/completions", streamBody, { "x-simulator-fault": "gzip" })
        expect(gzip.headers.get("content-encoding")).toBe("gzip")
        expect(yield* Effect.promise(() => gzip.text())).toMatch(/data: \[DONE\]/)
      })
    )

    it.effect("cuts the connection after the headers, or in the middle of an event", () =>
      Effect.gen(function* () {
        const streamBody = JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], stream: true })
        const afterHeaders = yield* post("/v1/chat/completions", streamBody, { "x-simulator-fault": "cut_after_headers" })
        expect(afterHeaders.status).toBe(200)
        const reader = afterHeaders.body!.getReader()
        expect((yield* Effect.either(Effect.tryPromise(() => reader.read())))._tag).toBe("Left")
        const midEvent = yield* post("/v1/chat/completions", streamBody, { "x-simulator-fault": "mid_event_abort", "x-simulator-fault-after": "1" })
        const midReader = midEvent.body!.getReader()
        let text = ""
        const cut = yield* Effect.promise(async () => {
          try {
            for (let read = await midReader.read(); !read.done; read = await midReader.read()) text += new TextDecoder().decode(read.value)
            return false
          } catch {
            return true
          }
        })
        expect(cut).toBe(true)
        // One whole event, then half of the next one.
        const [first, second] = text.split("\n\n")
        expect(JSON.parse(first!.slice("data: ".length))).toMatchObject({ object: "chat.completion.chunk" })
        expect(second).toMatch(/^data: \{/)
        expect(text.endsWith("\n\n")).toBe(false)
      })
    )

    it.effect("spaces stream events by the chunk delay", () =>
      Effect.gen(function* () {
        const started = Date.now()
        const response = yield* post(
          "/v1/chat/completions",
          JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], stream: true }),
          { "x-simulator-chunk-delay-ms": "40", "x-simulator-output-tokens": "3" }
        )
        const text = yield* Effect.promise(() => response.text())
        // role chunk, 3 content chunks, finish chunk, [DONE]: five gaps
        expect(text.match(/^data: /gm)).toHaveLength(6)
        expect(Date.now() - started).toBeGreaterThanOrEqual(160)
      })
    )

    it.effect("paces the same events it sends at once without a chunk delay, on both stream formats", () =>
      Effect.gen(function* () {
        const requests: ReadonlyArray<{ readonly path: string; readonly body: string; readonly headers: Record<string, string> }> = [
          { path: "/v1/chat/completions", body: JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], stream: true }), headers: {} },
          {
            path: "/v1/messages",
            body: JSON.stringify({ model: "assistantmodel-sonnet-4-20250514", max_tokens: 20, messages: [{ role: "user", content: "hi" }], stream: true }),
            headers: { "anthropic-version": "2023-06-01" }
          }
        ]
        // Ids and timestamps differ from one answer to the next; the events' kinds and contents must not.
        const shape = (text: string) =>
          text.split("\n\n").filter((event) => event.length > 0).map((event) => event.replace(/"(id|created)":("[^"]*"|\d+)/g, ""))
        for (const { path, body, headers } of requests) {
          const common = { ...headers, "x-simulator-output-tokens": "4" }
          const atOnce = yield* post(path, body, common)
          const paced = yield* post(path, body, { ...common, "x-simulator-chunk-delay-ms": "5" })
          expect(paced.headers.get("content-type")).toBe(atOnce.headers.get("content-type"))
          const [atOnceText, pacedText] = yield* Effect.promise(() => Promise.all([atOnce.text(), paced.text()]))
          expect(shape(pacedText).length).toBeGreaterThan(5)
          expect(shape(pacedText)).toEqual(shape(atOnceText))
        }
      })
    )

    it.effect("sends an event with cut-short JSON inside a stream", () =>
      Effect.gen(function* () {
        const response = yield* post(
          "/v1/messages",
          JSON.stringify({ model: "assistantmodel-sonnet-4-20250514", max_tokens: 20, messages: [{ role: "user", content: "hi" }], stream: true }),
          { "x-simulator-fault": "malformed_body", "x-simulator-fault-after": "2", "anthropic-version": "2023-06-01" }
        )
        const events = (yield* Effect.promise(() => response.text())).split("\n\n").filter((event) => event.length > 0)
        const broken = events[2] ?? ""
        expect(broken).toMatch(/^event: content_block_delta/)
        expect(() => JSON.parse(broken.slice(broken.indexOf("data: ") + 6))).toThrow()
        expect(events[events.length - 1]).toMatch(/message_stop/)
      })
    )

    it.effect("waits the asked latency before answering", () =>
      Effect.gen(function* () {
        const started = Date.now()
        const response = yield* post("/v1/chat/completions", chatBody, { "x-simulator-latency-ms": "150" })
        expect(response.status).toBe(200)
        expect(Date.now() - started).toBeGreaterThanOrEqual(140)
      })
    )

    it.effect("rejects an invalid control and an unknown path", () =>
      Effect.gen(function* () {
        const invalid = yield* post("/v1/chat/completions", chatBody, { "x-simulator-fault": "meteor" })
        expect(invalid.status).toBe(400)
        expect(yield* errorCodeOf(invalid)).toBe("invalid_simulator_control")
        const unknown = yield* post("/v1/completions", chatBody)
        expect(unknown.status).toBe(404)
      })
    )
  })

  layer(simulatorTestLayer({ apiKey: Option.some(Redacted.make("right-key")) }), { excludeTestServices: true })((it) => {
    it.effect("checks the key when one is configured, as Bearer or x-api-key", () =>
      Effect.gen(function* () {
        const missing = yield* post("/v1/chat/completions", chatBody)
        expect(missing.status).toBe(401)
        const wrong = yield* post("/v1/chat/completions", chatBody, { authorization: "Bearer wrong" })
        expect(wrong.status).toBe(401)
        expect(yield* errorCodeOf(wrong)).toBe("invalid_api_key")
        const bearer = yield* post("/v1/chat/completions", chatBody, { authorization: "Bearer right-key" })
        expect(bearer.status).toBe(200)
        const apiKeyHeader = yield* post(
          "/v1/messages",
          JSON.stringify({ model: "assistantmodel-sonnet-4-20250514", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
          { "x-api-key": "right-key", "anthropic-version": "2023-06-01" }
        )
        expect(apiKeyHeader.status).toBe(200)
      })
    )
  })

  layer(
    simulatorTestLayer({ apiKey: Option.some(Redacted.make("service-key")), acceptedKeys: [Redacted.make("workspace-key-1")] }),
    { excludeTestServices: true }
  )((it) => {
    it.effect("accepts the further keys it was told about, and only the key a request expects when it names one", () =>
      Effect.gen(function* () {
        expect((yield* post("/v1/chat/completions", chatBody, { authorization: "Bearer workspace-key-1" })).status).toBe(200)
        expect((yield* post("/v1/chat/completions", chatBody, { authorization: "Bearer service-key" })).status).toBe(200)
        expect((yield* post("/v1/chat/completions", chatBody, { authorization: "Bearer workspace-key-2" })).status).toBe(401)
        const expecting = (key: string) =>
          chatBody.replace('"messages":[', `"messages":[{"role":"user","content":"[simulator expect_key=${sha256(key).slice(0, 24)}]"},`)
        const right = yield* post("/v1/chat/completions", expecting("workspace-key-1"), { authorization: "Bearer workspace-key-1" })
        expect(right.status).toBe(200)
        // Accepted by the simulator in general, but not the key this request had to go with.
        const other = yield* post("/v1/chat/completions", expecting("workspace-key-1"), { authorization: "Bearer service-key" })
        expect(other.status).toBe(401)
        expect(yield* errorCodeOf(other)).toBe("invalid_api_key")
      })
    )

    it.effect("lists its models to a known key, in each protocol's list format, and refuses other keys", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* SimulatorAddress
        const chatIds = yield* Effect.promise(async () => {
          const ids: Array<string> = []
          for await (const model of new ProviderAClient({ baseURL: `${baseUrl}/v1`, apiKey: "workspace-key-1", maxRetries: 0 }).models.list()) ids.push(model.id)
          return ids
        })
        expect(chatIds).toContain("chatgen-4o")
        expect(chatIds).toContain("codemodel-latest")
        const messagesIds = yield* Effect.promise(async () => {
          const ids: Array<string> = []
          for await (const model of new ProviderBClient({ baseURL: baseUrl, apiKey: "service-key", maxRetries: 0 }).models.list()) ids.push(model.id)
          return ids
        })
        expect(messagesIds).toContain("assistantmodel-sonnet-4-5-20250929")
        const refused = yield* failureOf(() => new ProviderBClient({ baseURL: baseUrl, apiKey: "someone-else", maxRetries: 0 }).models.list())
        expect(refused).toMatchObject({ status: 401 })
      })
    )
  })
})
