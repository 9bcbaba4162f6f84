import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import ProviderAClient from "openai"
import { SimulatorAddress } from "../../../src/simulator/server"
import { collectAsync, failureOf, simulatorTestLayer } from "../harness"

const client = Effect.map(SimulatorAddress, ({ baseUrl }) => new ProviderAClient({ baseURL: `${baseUrl}/v1`, apiKey: "test-key", maxRetries: 0 }))

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Current weather",
    parameters: { type: "object", properties: { city: { type: "string" }, unit: { enum: ["c", "f"] } }, required: ["city", "unit"] }
  }
}

describe("provider_a chat completions", () => {
  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("answers a chat.completion the SDK reads, the same for the same request", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const request = { model: "chatgen-4o", messages: [{ role: "user" as const, content: "Say something" }] }
        const first = yield* Effect.promise(() => providerA.chat.completions.create(request))
        const second = yield* Effect.promise(() => providerA.chat.completions.create(request))
        expect(first.object).toBe("chat.completion")
        expect(Number.isInteger(first.created)).toBe(true)
        expect(first.id).toMatch(/^chatcmpl-/)
        expect(first.id).not.toBe(second.id)
        expect(first.choices[0]?.message.content).toBe(second.choices[0]?.message.content)
        expect(first.choices[0]?.message.content?.length).toBeGreaterThan(0)
        expect(first.choices[0]?.finish_reason).toBe("stop")
        const usage = first.usage!
        expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens)
        expect(usage.prompt_tokens).toBeGreaterThan(0)
      })
    )

    it.effect("stops at max_tokens with finish_reason length, and honours output_tokens", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const completion = yield* Effect.promise(() =>
          providerA.chat.completions.create(
            { model: "chatgen-4o-mini", messages: [{ role: "user", content: "Tell a long story" }], max_tokens: 5 },
            { headers: { "x-simulator-output-tokens": "200" } }
          )
        )
        expect(completion.choices[0]?.finish_reason).toBe("length")
        expect(completion.usage?.completion_tokens).toBe(5)
        const exact = yield* Effect.promise(() =>
          providerA.chat.completions.create(
            { model: "chatgen-4o-mini", messages: [{ role: "user", content: "Tell a story" }] },
            { headers: { "x-simulator-output-tokens": "37" } }
          )
        )
        expect(exact.usage?.completion_tokens).toBe(37)
        expect(exact.choices[0]?.finish_reason).toBe("stop")
      })
    )

    it.effect("streams chunks the SDK's stream helper accepts, with the same text as without streaming", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const request = { model: "chatgen-4.1", messages: [{ role: "user" as const, content: "Stream please" }] }
        const whole = yield* Effect.promise(() => providerA.chat.completions.create(request))
        const final = yield* Effect.promise(() =>
          providerA.chat.completions.stream({ ...request, stream_options: { include_usage: true } }).finalChatCompletion()
        )
        expect(final.choices[0]?.message.content).toBe(whole.choices[0]?.message.content)
        expect(final.choices[0]?.finish_reason).toBe("stop")
        expect(final.usage?.completion_tokens).toBe(whole.usage?.completion_tokens)
      })
    )

    it.effect("streams raw chunks ending with a usage chunk before [DONE]", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const stream = yield* Effect.promise(() =>
          providerA.chat.completions.create(
            { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } },
            { headers: { "x-simulator-output-tokens": "6", "x-simulator-chunk-tokens": "2" } }
          )
        )
        const chunks = yield* collectAsync(stream)
        expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant")
        const contentChunks = chunks.filter((chunk) => (chunk.choices[0]?.delta.content ?? "").length > 0)
        expect(contentChunks).toHaveLength(3)
        const last = chunks[chunks.length - 1]
        expect(last?.choices).toEqual([])
        expect(last?.usage?.completion_tokens).toBe(6)
        expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1)
      })
    )

    it.effect("calls a tool when the user has just spoken, and answers in text after the tool result", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const question = { role: "user" as const, content: "Weather in Paris?" }
        const first = yield* Effect.promise(() =>
          providerA.chat.completions.create({ model: "chatgen-4o", messages: [question], tools: [weatherTool] })
        )
        const call = first.choices[0]?.message.tool_calls?.[0]
        expect(first.choices[0]?.finish_reason).toBe("tool_calls")
        expect(call?.type).toBe("function")
        const args = JSON.parse(call?.type === "function" ? call.function.arguments : "{}")
        expect(typeof args.city).toBe("string")
        expect(["c", "f"]).toContain(args.unit)

        const streamed = yield* Effect.promise(() =>
          providerA.chat.completions.stream({ model: "chatgen-4o", messages: [question], tools: [weatherTool] }).finalChatCompletion()
        )
        const streamedCall = streamed.choices[0]?.message.tool_calls?.[0]
        expect(streamedCall?.type === "function" ? JSON.parse(streamedCall.function.arguments) : undefined).toEqual(args)

        const second = yield* Effect.promise(() =>
          providerA.chat.completions.create({
            model: "chatgen-4o",
            tools: [weatherTool],
            messages: [question, first.choices[0]!.message, { role: "tool", tool_call_id: call!.id, content: "18 C and sunny" }]
          })
        )
        expect(second.choices[0]?.finish_reason).toBe("stop")
        expect(second.choices[0]?.message.content?.length).toBeGreaterThan(0)
      })
    )

    it.effect("answers JSON that follows a json_schema response format", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const completion = yield* Effect.promise(() =>
          providerA.chat.completions.create({
            model: "chatgen-4o",
            messages: [{ role: "user", content: "Give me a person" }],
            response_format: {
              type: "json_schema",
              json_schema: {
                name: "person",
                strict: true,
                schema: { type: "object", properties: { name: { type: "string" }, age: { type: "integer" } }, required: ["name", "age"] }
              }
            }
          })
        )
        const person = JSON.parse(completion.choices[0]?.message.content ?? "")
        expect(typeof person.name).toBe("string")
        expect(Number.isInteger(person.age)).toBe(true)
      })
    )

    it.effect("gives n choices and logprobs when asked", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const completion = yield* Effect.promise(() =>
          providerA.chat.completions.create({
            model: "chatgen-4o",
            messages: [{ role: "user", content: "hi" }],
            n: 2,
            logprobs: true,
            top_logprobs: 3,
            max_tokens: 8
          })
        )
        expect(completion.choices.map((choice) => choice.index)).toEqual([0, 1])
        expect(completion.choices[0]?.message.content).not.toBe(completion.choices[1]?.message.content)
        const logprobs = completion.choices[0]?.logprobs?.content ?? []
        expect(logprobs.map((entry) => entry.token).join("")).toBe(completion.choices[0]?.message.content)
        expect(logprobs.every((entry) => entry.logprob <= 0 && entry.top_logprobs.length === 3)).toBe(true)
      })
    )

    it.effect("echoes the last user message when asked to", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const completion = yield* Effect.promise(() =>
          providerA.chat.completions.create({
            model: "chatgen-4o",
            messages: [{ role: "user", content: "repeat after me [simulator reply=echo]" }]
          })
        )
        expect(completion.choices[0]?.message.content).toBe("repeat after me [simulator reply=echo]")
      })
    )

    it.effect("rejects what the provider rejects, in its error format", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const unknownModel = yield* failureOf(() =>
          providerA.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] })
        )
        expect(unknownModel).toBeInstanceOf(ProviderAClient.NotFoundError)
        expect((unknownModel as InstanceType<typeof ProviderAClient.NotFoundError>).code).toBe("model_not_found")

        const badTemperature = yield* failureOf(() =>
          providerA.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], temperature: 3 })
        )
        expect(badTemperature).toBeInstanceOf(ProviderAClient.BadRequestError)
        expect((badTemperature as InstanceType<typeof ProviderAClient.BadRequestError>).param).toBe("temperature")

        const orphanToolResult = yield* failureOf(() =>
          providerA.chat.completions.create({
            model: "chatgen-4o",
            messages: [{ role: "user", content: "hi" }, { role: "tool", tool_call_id: "call_1", content: "x" }]
          })
        )
        expect(orphanToolResult).toBeInstanceOf(ProviderAClient.BadRequestError)
        expect((orphanToolResult as Error).message).toMatch(/tool_calls/)

        const tooManyStops = yield* failureOf(() =>
          providerA.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], stop: ["a", "b", "c", "d", "e"] })
        )
        expect((tooManyStops as InstanceType<typeof ProviderAClient.BadRequestError>).param).toBe("stop")

        const jsonWithoutInstruction = yield* failureOf(() =>
          providerA.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], response_format: { type: "json_object" } })
        )
        expect((jsonWithoutInstruction as Error).message).toMatch(/json/)
      })
    )

    it.effect("refuses max_tokens for reasoning models, as the provider does, and takes max_completion_tokens", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const messages = [{ role: "user" as const, content: "hi" }]
        for (const model of ["o3", "chatgen-5-mini"]) {
          const refused = yield* failureOf(() => providerA.chat.completions.create({ model, messages, max_tokens: 50 }))
          expect(refused).toBeInstanceOf(ProviderAClient.BadRequestError)
          const error = refused as InstanceType<typeof ProviderAClient.BadRequestError>
          expect(error.param).toBe("max_tokens")
          expect(error.code).toBe("unsupported_parameter")
          expect(error.type).toBe("invalid_request_error")
          expect(error.error).toMatchObject({
            message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
          })
        }
        const accepted = yield* Effect.promise(() => providerA.chat.completions.create({ model: "o3", messages, max_completion_tokens: 50 }))
        expect(accepted.object).toBe("chat.completion")
        // Not every model of the family reasons: the chat variant still takes max_tokens.
        const chatVariant = yield* Effect.promise(() => providerA.chat.completions.create({ model: "chatgen-5-chat", messages, max_tokens: 50 }))
        expect(chatVariant.object).toBe("chat.completion")
      })
    )
  })
})
