import { EventStreamCodec } from "@smithy/eventstream-codec"
import { fromUtf8, toUtf8 } from "@smithy/util-utf8"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { vi } from "vitest"
import type { AwsCredentials, BedrockDeployment } from "../../../../src/domain/deployments"
import type { SseEvent } from "../../../../src/domain/sse"
import { providerB } from "../../../../src/providers/providerB/dialect"
import { bedrockErrorAnswer, bedrockStreamDecoder, makeBedrockKind } from "../../../../src/services/forwarding/kinds/bedrock"
import type { PreparedCall, UpstreamCall } from "../../../../src/services/forwarding/kinds/UpstreamKind"
import { bedrockException } from "../../../../src/simulator/clouds/bedrock/errors"
import { chunkFrame, exceptionFrame } from "../../../../src/simulator/clouds/bedrock/eventStream"
import { SimulatorAddress } from "../../../../src/simulator/server"
import { defaultSimulatorSettings } from "../../../../src/simulator/settings"
import { simulatorTestLayer } from "../../../simulator/harness"

const { aws } = defaultSimulatorSettings
const upstreamModel = "eu.provider_b.assistantmodel-sonnet-4-5-20250929-v1:0"

const staticKeys = (secret = aws.secretAccessKey): AwsCredentials => ({
  _tag: "Static",
  accessKeyId: aws.accessKeyId,
  secretAccessKey: secret,
  sessionToken: undefined
})

const deployment = (url: string, credentials: AwsCredentials = staticKeys()): BedrockDeployment => ({
  kind: "bedrock",
  name: "bedrock-frankfurt",
  route: "provider_b/eu",
  provider: "provider_b",
  region: "eu",
  priority: 0,
  weight: 1,
  models: new Map([["assistantmodel-sonnet-4-5-20250929", upstreamModel]]),
  url,
  simulated: false,
  awsRegion: "eu-central-1",
  credentials
})

const messagesCall = (stream: boolean, overrides: Partial<UpstreamCall> = {}): UpstreamCall => ({
  operation: "messages",
  provider: providerB,
  path: "/v1/messages",
  body: { model: upstreamModel, max_tokens: 60, messages: [{ role: "user", content: "Hello there" }], ...(stream ? { stream: true } : {}) },
  upstreamModel,
  stream,
  headers: {
    "anthropic-version": "2023-06-01",
    "anthropic-beta": "feature-one, feature-two",
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
  },
  ownKey: undefined,
  ...overrides
})

const send = (prepared: PreparedCall, body = prepared.body) =>
  Effect.promise(async () => {
    const response = await fetch(prepared.url, { method: prepared.method, headers: prepared.headers, body })
    const bytes = new Uint8Array(await response.arrayBuffer())
    return { status: response.status, headers: Object.fromEntries(response.headers), bytes, text: toUtf8(bytes) }
  })

const simulatorUrl = Effect.map(SimulatorAddress, ({ baseUrl }) => baseUrl)

describe("the bedrock kind against the simulated Bedrock", () => {
  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("prepares a signed InvokeModel the simulator accepts: the model in the path, Bedrock's body", () =>
      Effect.gen(function* () {
        const kind = yield* makeBedrockKind
        const prepared = yield* kind.prepare(deployment(yield* simulatorUrl), messagesCall(false))
        expect(prepared.url).toMatch(/\/model\/eu\.provider_b\.assistantmodel-sonnet-4-5-20250929-v1:0\/invoke$/)
        expect(JSON.parse(prepared.body ?? "")).toEqual({
          max_tokens: 60,
          messages: [{ role: "user", content: "Hello there" }],
          anthropic_version: "bedrock-2023-05-31",
          anthropic_beta: ["feature-one", "feature-two"]
        })
        expect(Object.keys(prepared.headers)).not.toContain("anthropic-version")
        expect(Object.keys(prepared.headers)).not.toContain("anthropic-beta")
        expect(prepared.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=\S+\/eu-central-1\/bedrock\/aws4_request/)
        expect(prepared.headers.authorization).not.toMatch(/traceparent/)
        const answer = yield* send(prepared)
        expect(answer.status).toBe(200)
        expect(JSON.parse(answer.text)).toMatchObject({ type: "message", model: "assistantmodel-sonnet-4-5-20250929" })
      })
    )

    it.effect("a body changed after signing is refused (403), and reads as the messages API's permission error", () =>
      Effect.gen(function* () {
        const kind = yield* makeBedrockKind
        const prepared = yield* kind.prepare(deployment(yield* simulatorUrl), messagesCall(false))
        const tampered = yield* send(prepared, (prepared.body ?? "").replace("Hello there", "Hello thera"))
        expect(tampered.status).toBe(403)
        const answer = kind.errorAnswer(tampered.status, tampered.headers, tampered.text)
        expect(answer.status).toBe(403)
        expect(JSON.parse(answer.body)).toMatchObject({ type: "error", error: { type: "permission_error" } })
        const wrongSecret = yield* kind.prepare(deployment(yield* simulatorUrl, staticKeys(Redacted.make("wrong"))), messagesCall(false))
        expect((yield* send(wrongSecret)).status).toBe(403)
      })
    )

    it.effect("decodes the event stream into the messages API's events, the invocation metrics removed", () =>
      Effect.gen(function* () {
        const kind = yield* makeBedrockKind
        expect(kind.streamContentType).toBe("application/vnd.amazon.eventstream")
        const prepared = yield* kind.prepare(deployment(yield* simulatorUrl), messagesCall(true))
        expect(prepared.url).toMatch(/\/invoke-with-response-stream$/)
        const answer = yield* send(prepared)
        expect(answer.status).toBe(200)
        expect(answer.headers["content-type"]).toContain(kind.streamContentType)
        const events = kind.streamDecoder(1 << 20).feed(answer.bytes) ?? []
        expect(events.map((event) => event.event)).toEqual(expect.arrayContaining(["message_start", "content_block_delta", "message_delta"]))
        expect(events[0]?.event).toBe("message_start")
        expect(events.at(-1)).toEqual({ event: "message_stop", data: '{"type":"message_stop"}' })
        const delta = JSON.parse(events.find((event) => event.event === "message_delta")?.data ?? "{}")
        expect(delta.usage.output_tokens).toBeGreaterThan(0)
      })
    )

    it.effect("counts tokens with CountTokens, answered as the messages API's { input_tokens }", () =>
      Effect.gen(function* () {
        const kind = yield* makeBedrockKind
        const call = messagesCall(false, {
          operation: "count_tokens",
          path: "/v1/messages/count_tokens",
          body: { model: upstreamModel, messages: [{ role: "user", content: "Hello there" }] }
        })
        const prepared = yield* kind.prepare(deployment(yield* simulatorUrl), call)
        expect(prepared.url).toMatch(/\/count-tokens$/)
        const answer = yield* send(prepared)
        expect(answer.status).toBe(200)
        const counted = JSON.parse(kind.jsonAnswer?.(answer.text, call) ?? "{}")
        expect(counted.input_tokens).toBeGreaterThan(0)
        expect(Object.keys(counted)).toEqual(["input_tokens"])
      })
    )

    it.effect("takes credentials from the standard chain; none found is an unreachable upstream", () =>
      Effect.gen(function* () {
        const url = yield* simulatorUrl
        vi.stubEnv("AWS_ACCESS_KEY_ID", aws.accessKeyId)
        vi.stubEnv("AWS_SECRET_ACCESS_KEY", Redacted.value(aws.secretAccessKey))
        const found = yield* makeBedrockKind
        const prepared = yield* found.prepare(deployment(url, { _tag: "Chain" }), messagesCall(false))
        expect((yield* send(prepared)).status).toBe(200)

        vi.stubEnv("AWS_ACCESS_KEY_ID", "")
        vi.stubEnv("AWS_SECRET_ACCESS_KEY", "")
        vi.stubEnv("AWS_PROFILE", "wsapi-test-none")
        vi.stubEnv("AWS_CONFIG_FILE", "/nonexistent/wsapi-aws-config")
        vi.stubEnv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/wsapi-aws-credentials")
        vi.stubEnv("AWS_EC2_METADATA_DISABLED", "true")
        vi.stubEnv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "")
        vi.stubEnv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "")
        vi.stubEnv("AWS_WEB_IDENTITY_TOKEN_FILE", "")
        const none = yield* makeBedrockKind
        const failure = yield* Effect.flip(none.prepare(deployment(url, { _tag: "Chain" }), messagesCall(false)))
        expect(failure).toMatchObject({ _tag: "UpstreamFailure", kind: "unreachable" })
        expect(failure.detail).toContain("bedrock-frankfurt")
      }).pipe(Effect.ensuring(Effect.sync(() => vi.unstubAllEnvs())))
    )
  })
})

const frameCodec = new EventStreamCodec(toUtf8, fromUtf8)

const messagesEvents = [
  { type: "message_start", message: { id: "msg_01", usage: { input_tokens: 5, output_tokens: 1 } } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hé ✓" } },
  { type: "message_stop", "amazon-bedrock-invocationMetrics": { inputTokenCount: 5, outputTokenCount: 2, invocationLatency: 9, firstByteLatency: 3 } }
]

const expected: ReadonlyArray<SseEvent> = [
  { event: "message_start", data: JSON.stringify(messagesEvents[0]) },
  { event: "content_block_delta", data: JSON.stringify(messagesEvents[1]) },
  { event: "message_stop", data: '{"type":"message_stop"}' }
]

const joined = Buffer.concat(messagesEvents.map((event) => chunkFrame(JSON.stringify(event))))

describe("bedrockStreamDecoder", () => {
  it("gives the same events wherever the bytes are split", () => {
    for (let at = 0; at <= joined.length; at++) {
      const decoder = bedrockStreamDecoder(4096)
      const events = [...(decoder.feed(joined.subarray(0, at)) ?? ["failed"]), ...(decoder.feed(joined.subarray(at)) ?? ["failed"])]
      expect(events, `split at ${at}`).toEqual(expected)
    }
    const byteByByte = bedrockStreamDecoder(4096)
    const events: Array<SseEvent> = []
    for (const byte of joined) events.push(...(byteByByte.feed(Uint8Array.of(byte)) ?? []))
    expect(events).toEqual(expected)
  })

  it("refuses a frame over the bound from its prelude, and a frame that does not decode", () => {
    const large = chunkFrame(JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "x".repeat(10_000) } }))
    expect(bedrockStreamDecoder(1024).feed(large.subarray(0, 4))).toBeUndefined()
    expect(bedrockStreamDecoder(20_000).feed(large)).toHaveLength(1)
    const corrupted = Uint8Array.from(joined)
    corrupted[20] = (corrupted[20] ?? 0) ^ 0xff
    expect(bedrockStreamDecoder(4096).feed(corrupted)).toBeUndefined()
    const notAnEvent = frameCodec.encode({
      headers: { ":message-type": { type: "string", value: "event" }, ":event-type": { type: "string", value: "chunk" } },
      body: fromUtf8('{"bytes":"bm90IGpzb24="}')
    })
    expect(bedrockStreamDecoder(4096).feed(notAnEvent)).toBeUndefined()
  })

  it("turns an exception frame into the messages API's in-band error event", () => {
    const throttled = exceptionFrame(bedrockException("ThrottlingException", 429, "Too many tokens, please wait."))
    const decoder = bedrockStreamDecoder(4096)
    expect(decoder.feed(Buffer.concat([chunkFrame(JSON.stringify(messagesEvents[0])), throttled]))).toEqual([
      expected[0],
      { event: "error", data: JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "Too many tokens, please wait." } }) }
    ])
    const internal = exceptionFrame(bedrockException("InternalServerException", 500, "Broken."))
    expect(JSON.parse(bedrockStreamDecoder(4096).feed(internal)?.[0]?.data ?? "{}")).toMatchObject({ error: { type: "api_error" } })
    const unavailable = exceptionFrame(bedrockException("ServiceUnavailableException", 503, "Busy."))
    expect(JSON.parse(bedrockStreamDecoder(4096).feed(unavailable)?.[0]?.data ?? "{}")).toMatchObject({ error: { type: "overloaded_error" } })
  })
})

describe("bedrockErrorAnswer", () => {
  const errorOf = (status: number, errorType: string | undefined, body = '{"message":"Said by Bedrock."}') =>
    bedrockErrorAnswer(status, errorType === undefined ? {} : { "x-amzn-errortype": `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/` }, body)

  it.each([
    ["ThrottlingException", 429, 429, "rate_limit_error"],
    ["ValidationException", 400, 400, "invalid_request_error"],
    ["AccessDeniedException", 403, 403, "permission_error"],
    ["InvalidSignatureException", 403, 403, "permission_error"],
    ["ResourceNotFoundException", 404, 404, "not_found_error"],
    ["ServiceUnavailableException", 503, 529, "overloaded_error"],
    ["ModelNotReadyException", 429, 429, "rate_limit_error"],
    ["ModelTimeoutException", 408, 504, "timeout_error"],
    ["ModelErrorException", 424, 500, "api_error"],
    ["InternalServerException", 500, 500, "api_error"],
    ["SomethingNewException", 500, 500, "api_error"]
  ])("%s (%i) → %i %s", (name, status, answered, type) => {
    const answer = errorOf(status, name)
    expect(answer.status).toBe(answered)
    expect(JSON.parse(answer.body)).toEqual({ type: "error", error: { type, message: "Said by Bedrock." } })
  })

  it("reads the header whatever its case, keeps a proxy's status, and passes the messages format through", () => {
    expect(bedrockErrorAnswer(429, { "X-Amzn-ErrorType": "ThrottlingException" }, '{"Message":"Slow down."}')).toEqual({
      status: 429,
      body: JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "Slow down." } })
    })
    const proxy = errorOf(502, undefined, "<html>Bad Gateway</html>")
    expect(proxy.status).toBe(502)
    expect(JSON.parse(proxy.body).error.type).toBe("api_error")
    const own = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    expect(errorOf(529, undefined, own)).toEqual({ status: 529, body: own })
  })
})
