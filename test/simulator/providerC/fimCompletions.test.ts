import { describe, expect, layer } from "@effect/vitest"
import { Mistral as ProviderCClient } from "@mistralai/mistralai"
import { HTTPValidationError, MistralError as ProviderCError } from "@mistralai/mistralai/models/errors"
import { Effect } from "effect"
import { SimulatorAddress } from "../../../src/simulator/server"
import { collectAsync, failureOf, simulatorTestLayer } from "../harness"

const client = Effect.map(SimulatorAddress, ({ baseUrl }) => new ProviderCClient({ serverURL: baseUrl, apiKey: "test-key" }))

describe("provider_c FIM completions", () => {
  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("completes between prompt and suffix in a response the SDK validates", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const request = { model: "codemodel-2501", prompt: "def fibonacci(n):\n    ", suffix: "\nprint(fibonacci(10))" }
        const first = yield* Effect.promise(() => sdk.fim.complete(request))
        const second = yield* Effect.promise(() => sdk.fim.complete(request))
        const content = first.choices[0]?.message?.content
        expect(typeof content).toBe("string")
        expect(content).toBe(second.choices[0]?.message?.content)
        expect(content).toMatch(/fibonacci|n/)
        expect(first.choices[0]?.finishReason).toBe("stop")
        expect(first.usage.totalTokens).toBe((first.usage.promptTokens ?? 0) + (first.usage.completionTokens ?? 0))
      })
    )

    it.effect("streams chunks ending with [DONE] that add up to the same completion", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const request = { model: "codemodel-2501", prompt: "function add(a, b) {", maxTokens: 12 }
        const whole = yield* Effect.promise(() => sdk.fim.complete(request))
        const stream = yield* Effect.promise(() => sdk.fim.stream(request))
        const events = yield* collectAsync(stream)
        const text = events.map((event) => event.data.choices[0]?.delta.content ?? "").join("")
        expect(text).toBe(whole.choices[0]?.message?.content)
        const last = events[events.length - 1]
        expect(last?.data.choices[0]?.finishReason).toBe(whole.choices[0]?.finishReason)
        expect(last?.data.usage?.completionTokens).toBe(whole.usage.completionTokens)
      })
    )

    it.effect("stops at max_tokens and at a stop string", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const cut = yield* Effect.promise(() => sdk.fim.complete({ model: "codemodel-2501", prompt: "x = ", maxTokens: 3 }))
        expect(cut.choices[0]?.finishReason).toBe("length")
        expect(cut.usage.completionTokens).toBeLessThanOrEqual(3)
        const stopped = yield* Effect.promise(() => sdk.fim.complete({ model: "codemodel-2501", prompt: "def f(x):\n", stop: "\n" }))
        expect(stopped.choices[0]?.message?.content).not.toContain("\n")
      })
    )

    it.effect("rejects malformed requests with a 422 the SDK turns into HTTPValidationError", () =>
      Effect.gen(function* () {
        const sdk = yield* client
        const invalid = yield* failureOf(() => sdk.fim.complete({ model: "codemodel-2501", prompt: "x", temperature: 3 }))
        expect(invalid).toBeInstanceOf(HTTPValidationError)
        expect((invalid as HTTPValidationError).detail?.[0]?.loc).toEqual(["body", "temperature"])
        const unknownModel = yield* failureOf(() => sdk.fim.complete({ model: "nope", prompt: "x" }))
        expect((unknownModel as ProviderCError).statusCode).toBe(400)
        expect((unknownModel as Error).message).toMatch(/Invalid model/)
      })
    )
  })
})
