import { AnthropicBedrock } from "@anthropic-ai/bedrock-sdk"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SimulatorAddress } from "../../../src/simulator/server"
import { defaultSimulatorSettings } from "../../../src/simulator/settings"
import { collectAsync, failureOf, simulatorTestLayer } from "../harness"

const { aws } = defaultSimulatorSettings
const model = "eu.provider_b.assistantmodel-sonnet-4-5-20250929-v1:0"

/**
 * The official Bedrock client. It copies its `anthropic-version` header into the body's `anthropic_version`, so the
 * header carries the one value Bedrock documents.
 */
const client = (secret: string = "") =>
  Effect.map(
    SimulatorAddress,
    ({ baseUrl }) =>
      new AnthropicBedrock({
        baseURL: baseUrl,
        awsAccessKey: aws.accessKeyId,
        awsSecretKey: secret === "" ? "simulator-aws-secret-access-key" : secret,
        awsRegion: "eu-central-1",
        maxRetries: 0,
        defaultHeaders: { "anthropic-version": "bedrock-2023-05-31" }
      })
  )

const weatherTool = {
  name: "get_weather",
  description: "Current weather",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] }
}

describe("Bedrock InvokeModel (simulated)", () => {
  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("answers a Message the Bedrock client reads, the model from the path", () =>
      Effect.gen(function* () {
        const sdk = yield* client()
        const message = yield* Effect.promise(() =>
          sdk.messages.create({ model, max_tokens: 100, messages: [{ role: "user", content: "Hello" }] })
        )
        expect(message.type).toBe("message")
        expect(message.model).toBe("assistantmodel-sonnet-4-5-20250929")
        expect(message.content[0]?.type).toBe("text")
        expect(message.usage.input_tokens).toBeGreaterThan(0)
        expect(message.usage.output_tokens).toBeGreaterThan(0)
      })
    )

    it.effect("streams event-stream frames the client turns into the messages events, usage included", () =>
      Effect.gen(function* () {
        const sdk = yield* client()
        const request = { model, max_tokens: 100, messages: [{ role: "user" as const, content: "Stream it" }] }
        const whole = yield* Effect.promise(() => sdk.messages.create(request))
        const events = yield* collectAsync(yield* Effect.promise(() => sdk.messages.create({ ...request, stream: true })))
        expect(events[0]?.type).toBe("message_start")
        expect(events.at(-1)?.type).toBe("message_stop")
        expect(events.at(-1)).toHaveProperty(["amazon-bedrock-invocationMetrics", "outputTokenCount"], whole.usage.output_tokens)
        const final = yield* Effect.promise(() => sdk.messages.stream(request).finalMessage())
        expect(final.content).toEqual(whole.content)
        expect(final.usage.output_tokens).toBe(whole.usage.output_tokens)
      })
    )

    it.effect("calls a tool, streamed or not", () =>
      Effect.gen(function* () {
        const sdk = yield* client()
        const request = {
          model,
          max_tokens: 300,
          tools: [weatherTool],
          tool_choice: { type: "any" as const },
          messages: [{ role: "user" as const, content: "Weather in Paris?" }]
        }
        const message = yield* Effect.promise(() => sdk.messages.create(request))
        expect(message.stop_reason).toBe("tool_use")
        const call = message.content.find((block) => block.type === "tool_use")
        expect(call?.name).toBe("get_weather")
        const streamed = yield* Effect.promise(() => sdk.messages.stream(request).finalMessage())
        const streamedCall = streamed.content.find((block) => block.type === "tool_use")
        expect(streamedCall).toMatchObject({ name: "get_weather", input: call?.input })
      })
    )

    it.effect("sends anthropic-beta as the body's anthropic_beta, which Bedrock accepts", () =>
      Effect.gen(function* () {
        const sdk = yield* client()
        const message = yield* Effect.promise(() =>
          sdk.messages.create(
            { model, max_tokens: 20, messages: [{ role: "user", content: "Hi" }] },
            { headers: { "anthropic-beta": "feature-one-2025-01-01,feature-two" } }
          )
        )
        expect(message.type).toBe("message")
      })
    )

    it.effect("maps Bedrock's errors to the client's error classes", () =>
      Effect.gen(function* () {
        const sdk = yield* client()
        const throttled = yield* failureOf(() =>
          sdk.messages.create({ model, max_tokens: 20, messages: [{ role: "user", content: "[simulator fault=rate_limit] hi" }] })
        )
        expect(throttled).toBeInstanceOf(AnthropicBedrock.RateLimitError)
        expect((throttled as InstanceType<typeof AnthropicBedrock.RateLimitError>).headers.get("x-amzn-errortype")).toMatch(/^ThrottlingException:/)
        const invalid = yield* failureOf(() =>
          sdk.messages.create({ model, max_tokens: 20, messages: [{ role: "assistant", content: "first" }] })
        )
        expect(invalid).toBeInstanceOf(AnthropicBedrock.BadRequestError)
        const unknown = yield* failureOf(() =>
          sdk.messages.create({ model: "eu.provider_b.assistantmodel-0-v1:0", max_tokens: 20, messages: [{ role: "user", content: "hi" }] })
        )
        expect(unknown).toBeInstanceOf(AnthropicBedrock.NotFoundError)
        const unavailable = yield* failureOf(() =>
          sdk.messages.create({ model, max_tokens: 20, messages: [{ role: "user", content: "[simulator status=503] hi" }] })
        )
        expect(unavailable).toBeInstanceOf(AnthropicBedrock.InternalServerError)
        expect((unavailable as InstanceType<typeof AnthropicBedrock.InternalServerError>).status).toBe(503)
      })
    )

    it.effect("refuses another anthropic_version than Bedrock's", () =>
      Effect.gen(function* () {
        const sdk = (yield* client()).withOptions({ defaultHeaders: { "anthropic-version": "2023-06-01" } })
        const refused = yield* failureOf(() => sdk.messages.create({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }))
        expect(refused).toBeInstanceOf(AnthropicBedrock.BadRequestError)
        expect(String((refused as Error).message)).toContain("bedrock-2023-05-31")
      })
    )

    it.effect("refuses a request signed with a wrong secret (403)", () =>
      Effect.gen(function* () {
        const sdk = yield* client("not-the-secret")
        const refused = yield* failureOf(() => sdk.messages.create({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }))
        expect(refused).toBeInstanceOf(AnthropicBedrock.PermissionDeniedError)
        expect((refused as InstanceType<typeof AnthropicBedrock.PermissionDeniedError>).headers.get("x-amzn-errortype")).toMatch(
          /^InvalidSignatureException:/
        )
      })
    )

    it.effect("ends a stream broken mid-way with Bedrock's exception frame, which the client reads as an error", () =>
      Effect.gen(function* () {
        const sdk = yield* client()
        const failure = yield* failureOf(() =>
          sdk.messages.stream({ model, max_tokens: 100, messages: [{ role: "user", content: "[simulator fault=mid_stream_error fault_after=3] hi" }] }).finalMessage()
        )
        expect(String(failure)).toMatch(/internalServerException|interrupted/)
      })
    )
  })
})
