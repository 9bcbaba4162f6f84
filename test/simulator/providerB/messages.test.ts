import ProviderBClient from "@anthropic-ai/sdk"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SimulatorAddress } from "../../../src/simulator/server"
import { failureOf, simulatorTestLayer } from "../harness"

const client = Effect.map(SimulatorAddress, ({ baseUrl }) => new ProviderBClient({ baseURL: baseUrl, apiKey: "test-key", maxRetries: 0 }))

const model = "assistantmodel-sonnet-4-5-20250929"
const weatherTool = {
  name: "get_weather",
  description: "Current weather",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] }
}

describe("provider_b messages", () => {
  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("answers a Message the SDK reads, the same text for the same request", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const request = { model, max_tokens: 200, messages: [{ role: "user" as const, content: "Hello" }] }
        const first = yield* Effect.promise(() => sdk.messages.create(request))
        const second = yield* Effect.promise(() => sdk.messages.create(request))
        expect(first.type).toBe("message")
        expect(first.role).toBe("assistant")
        expect(first.id).toMatch(/^msg_01/)
        expect(first.stop_reason).toBe("end_turn")
        expect(first.content[0]?.type).toBe("text")
        expect(first.content).toEqual(second.content)
        expect(first.usage.input_tokens).toBeGreaterThan(0)
        expect(first.usage.output_tokens).toBeGreaterThan(0)
      })
    )

    it.effect("streams events the SDK's MessageStream assembles into the same message", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const request = { model, max_tokens: 200, messages: [{ role: "user" as const, content: "Stream it" }] }
        const whole = yield* Effect.promise(() => sdk.messages.create(request))
        const streamed = yield* Effect.promise(() => sdk.messages.stream(request).finalMessage())
        expect(streamed.content).toEqual(whole.content)
        expect(streamed.stop_reason).toBe(whole.stop_reason)
        expect(streamed.usage.output_tokens).toBe(whole.usage.output_tokens)
      })
    )

    it.effect("stops at max_tokens and at stop sequences", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const cut = yield* Effect.promise(() =>
          sdk.messages.create({ model, max_tokens: 4, messages: [{ role: "user", content: "A long answer please" }] }, { headers: { "x-simulator-output-tokens": "100" } })
        )
        expect(cut.stop_reason).toBe("max_tokens")
        expect(cut.usage.output_tokens).toBe(4)
        const stopped = yield* Effect.promise(() =>
          sdk.messages.create({ model, max_tokens: 500, stop_sequences: ["."], messages: [{ role: "user", content: "Sentences" }] }, { headers: { "x-simulator-output-tokens": "100" } })
        )
        expect(stopped.stop_reason).toBe("stop_sequence")
        expect(stopped.stop_sequence).toBe(".")
        expect(stopped.content[0]?.type === "text" ? stopped.content[0].text : ".").not.toContain(".")
      })
    )

    it.effect("uses a tool, streams its input as JSON deltas, and answers after the tool result", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const question = { role: "user" as const, content: "Weather in Oslo?" }
        const first = yield* Effect.promise(() => sdk.messages.create({ model, max_tokens: 300, tools: [weatherTool], messages: [question] }))
        expect(first.stop_reason).toBe("tool_use")
        const toolUse = first.content.find((block) => block.type === "tool_use")
        expect(toolUse?.type === "tool_use" ? typeof (toolUse.input as { city?: unknown }).city : undefined).toBe("string")

        const streamed = yield* Effect.promise(() => sdk.messages.stream({ model, max_tokens: 300, tools: [weatherTool], messages: [question] }).finalMessage())
        const streamedToolUse = streamed.content.find((block) => block.type === "tool_use")
        expect(streamedToolUse?.type === "tool_use" ? streamedToolUse.input : undefined).toEqual(toolUse?.type === "tool_use" ? toolUse.input : null)

        const answer = yield* Effect.promise(() =>
          sdk.messages.create({
            model,
            max_tokens: 300,
            tools: [weatherTool],
            messages: [
              question,
              { role: "assistant", content: first.content },
              { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse?.type === "tool_use" ? toolUse.id : "", content: "5 C" }] }
            ]
          })
        )
        expect(answer.stop_reason).toBe("end_turn")
        expect(answer.content[0]?.type).toBe("text")
      })
    )

    it.effect("thinks first when extended thinking is on", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const message = yield* Effect.promise(() =>
          sdk.messages.stream({ model, max_tokens: 4000, thinking: { type: "enabled", budget_tokens: 2000 }, messages: [{ role: "user", content: "Think" }] }).finalMessage()
        )
        expect(message.content.map((block) => block.type)).toEqual(["thinking", "text"])
        const thinking = message.content[0]
        expect(thinking?.type === "thinking" ? thinking.signature.length : 0).toBeGreaterThan(0)
      })
    )

    it.effect("rejects what the provider rejects, in its error format", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const unknownModel = yield* failureOf(() => sdk.messages.create({ model: "nope", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }))
        expect(unknownModel).toBeInstanceOf(ProviderBClient.NotFoundError)
        expect((unknownModel as InstanceType<typeof ProviderBClient.NotFoundError>).type).toBe("not_found_error")

        const tooMany = yield* failureOf(() => sdk.messages.create({ model: "assistantmodel-3-5-sonnet-20240620", max_tokens: 10_000, messages: [{ role: "user", content: "hi" }] }))
        expect(tooMany).toBeInstanceOf(ProviderBClient.BadRequestError)
        expect((tooMany as Error).message).toMatch(/maximum allowed number of output tokens/)

        const orphan = yield* failureOf(() =>
          sdk.messages.create({ model, max_tokens: 10, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_x", content: "1" }] }] })
        )
        expect((orphan as Error).message).toMatch(/tool_use_id/)

        const assistantFirst = yield* failureOf(() => sdk.messages.create({ model, max_tokens: 10, messages: [{ role: "assistant", content: "hi" }] }))
        expect(assistantFirst).toBeInstanceOf(ProviderBClient.BadRequestError)
      })
    )

    it.effect("requires the anthropic-version header, as the provider does", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* SimulatorAddress
        const response = yield* Effect.promise(() =>
          fetch(`${baseUrl}/v1/messages`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: "Bearer k" },
            body: JSON.stringify({ model, max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
          })
        )
        expect(response.status).toBe(400)
        expect(response.headers.get("request-id")).toMatch(/^req_/)
        const body = yield* Effect.promise(() => response.json())
        expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } })
      })
    )
  })
})
