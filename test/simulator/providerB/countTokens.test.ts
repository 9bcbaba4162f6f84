import ProviderBClient from "@anthropic-ai/sdk"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SimulatorAddress } from "../../../src/simulator/server"
import { failureOf, simulatorTestLayer } from "../harness"

const client = Effect.map(SimulatorAddress, ({ baseUrl }) => new ProviderBClient({ baseURL: baseUrl, apiKey: "test-key", maxRetries: 0 }))

const model = "assistantmodel-sonnet-4-5-20250929"

describe("provider_b token counting", () => {
  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("counts the input tokens the messages answer reports for the same request", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const messages = [{ role: "user" as const, content: "How many tokens is this sentence, all in all?" }]
        const counted = yield* Effect.promise(() => sdk.messages.countTokens({ model, messages, system: "Be brief." }))
        const answered = yield* Effect.promise(() => sdk.messages.create({ model, max_tokens: 50, messages, system: "Be brief." }))
        expect(counted).toEqual({ input_tokens: answered.usage.input_tokens })
        const longer = yield* Effect.promise(() =>
          sdk.messages.countTokens({ model, messages: [{ role: "user", content: "How many tokens? ".repeat(50) }] })
        )
        expect(longer.input_tokens).toBeGreaterThan(counted.input_tokens)
      })
    )

    it.effect("refuses an unknown model (404) and a conversation that starts with the assistant (400)", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const unknown = yield* failureOf(() => sdk.messages.countTokens({ model: "assistantmodel-0", messages: [{ role: "user", content: "x" }] }))
        expect(unknown).toBeInstanceOf(ProviderBClient.NotFoundError)
        const assistantFirst = yield* failureOf(() => sdk.messages.countTokens({ model, messages: [{ role: "assistant", content: "x" }] }))
        expect(assistantFirst).toBeInstanceOf(ProviderBClient.BadRequestError)
      })
    )
  })
})
