import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import ProviderAClient from "openai"
import { zodTextFormat } from "openai/helpers/zod"
import { z } from "zod"
import { SimulatorAddress } from "../../../src/simulator/server"
import { collectAsync, failureOf, simulatorTestLayer } from "../harness"

const client = Effect.map(SimulatorAddress, ({ baseUrl }) => new ProviderAClient({ baseURL: `${baseUrl}/v1`, apiKey: "test-key", maxRetries: 0 }))

const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true
}

describe("provider_a Responses API (simulator)", () => {
  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("answers a response object the library reads, with its usage", () =>
      Effect.gen(function*() {
        const providerA = yield* client
        const response = yield* Effect.promise(() =>
          providerA.responses.create({ model: "chatgen-4o", instructions: "Be brief.", input: "Say something", store: false })
        )
        expect(response.object).toBe("response")
        expect(response.id).toMatch(/^resp_/)
        expect(response.status).toBe("completed")
        expect(response.output_text.length).toBeGreaterThan(0)
        const usage = response.usage!
        expect(usage.input_tokens).toBeGreaterThan(0)
        expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens)
        expect(usage.input_tokens_details.cached_tokens).toBe(0)
        expect(usage.output_tokens_details.reasoning_tokens).toBe(0)
      }))

    it.effect("reports cached tokens on long prompts and reasoning tokens (and the encrypted reasoning) on reasoning models", () =>
      Effect.gen(function*() {
        const providerA = yield* client
        const response = yield* Effect.promise(() =>
          providerA.responses.create({
            model: "chatgen-5",
            input: [{ role: "user", content: "word ".repeat(3000) }],
            include: ["reasoning.encrypted_content"],
            store: false
          })
        )
        expect(response.usage!.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1024)
        expect(response.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThan(0)
        const reasoning = response.output.find((item) => item.type === "reasoning")
        expect(reasoning?.type === "reasoning" ? reasoning.encrypted_content : undefined).toMatch(/^gAAAA/)
      }))

    it.effect("streams the typed events the library accumulates into the final response", () =>
      Effect.gen(function*() {
        const providerA = yield* client
        const stream = providerA.responses.stream({ model: "chatgen-4o-mini", input: "Tell a story" })
        const events = yield* collectAsync(stream)
        const final = yield* Effect.promise(() => stream.finalResponse())
        const types = events.map((event) => event.type)
        expect(types.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"])
        expect(types.at(-1)).toBe("response.completed")
        const deltas = events.flatMap((event) => (event.type === "response.output_text.delta" ? [event.delta] : []))
        expect(deltas.length).toBeGreaterThan(1)
        expect(final.output_text).toBe(deltas.join(""))
        expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index))
        expect(final.usage!.output_tokens).toBeGreaterThan(0)
      }))

    it.effect("calls a function tool, and answers once its output comes back", () =>
      Effect.gen(function*() {
        const providerA = yield* client
        const first = yield* Effect.promise(() =>
          providerA.responses.create({ model: "chatgen-4o", input: "Weather in Paris?", tools: [weatherTool], store: false })
        )
        const call = first.output.find((item) => item.type === "function_call")
        if (call?.type !== "function_call") return expect.fail("no function call")
        expect(call.name).toBe("get_weather")
        expect(typeof JSON.parse(call.arguments).city).toBe("string")
        const second = yield* Effect.promise(() =>
          providerA.responses.create({
            model: "chatgen-4o",
            tools: [weatherTool],
            store: false,
            input: [
              { role: "user", content: "Weather in Paris?" },
              { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
              { type: "function_call_output", call_id: call.call_id, output: "{\"celsius\":21}" }
            ]
          })
        )
        expect(second.output.some((item) => item.type === "message")).toBe(true)
        expect(second.output_text.length).toBeGreaterThan(0)
      }))

    it.effect("streams a function call's arguments", () =>
      Effect.gen(function*() {
        const providerA = yield* client
        const stream = providerA.responses.stream({ model: "chatgen-4o", input: "Weather?", tools: [weatherTool], tool_choice: "required" })
        const events = yield* collectAsync(stream)
        const final = yield* Effect.promise(() => stream.finalResponse())
        const fragments = events.flatMap((event) => (event.type === "response.function_call_arguments.delta" ? [event.delta] : []))
        const call = final.output.find((item) => item.type === "function_call")
        expect(call?.type === "function_call" ? call.arguments : undefined).toBe(fragments.join(""))
      }))

    it.effect("answers json_schema output that .parse reads with a zod schema", () =>
      Effect.gen(function*() {
        const providerA = yield* client
        const Person = z.object({ name: z.string(), age: z.number() })
        const parsed = yield* Effect.promise(() =>
          providerA.responses.parse({ model: "chatgen-4o", input: "A person", text: { format: zodTextFormat(Person, "person") } })
        )
        expect(Person.parse(parsed.output_parsed)).toEqual(parsed.output_parsed)
      }))

    it.effect("stops at max_output_tokens as an incomplete response", () =>
      Effect.gen(function*() {
        const providerA = yield* client
        const response = yield* Effect.promise(() =>
          providerA.responses.create(
            { model: "chatgen-4o", input: "A long story", max_output_tokens: 16 },
            { headers: { "x-simulator-output-tokens": "200" } }
          )
        )
        expect(response.status).toBe("incomplete")
        expect(response.incomplete_details?.reason).toBe("max_output_tokens")
        expect(response.usage!.output_tokens).toBe(16)
      }))

    it.effect("refuses what the provider refuses, naming the field", () =>
      Effect.gen(function*() {
        const providerA = yield* client
        const bad = yield* failureOf(() => providerA.responses.create({ model: "chatgen-4o", input: "x", temperature: 3 }))
        expect(bad).toBeInstanceOf(ProviderAClient.BadRequestError)
        expect((bad as InstanceType<typeof ProviderAClient.BadRequestError>).param).toBe("temperature")
        const stored = yield* failureOf(() => providerA.responses.create({ model: "chatgen-4o", input: "x", previous_response_id: "resp_1" }))
        expect(stored).toBeInstanceOf(ProviderAClient.NotFoundError)
      }))

    it.effect("sends the stream's error event on a mid-stream fault, as the provider writes it", () =>
      Effect.gen(function*() {
        const providerA = yield* client
        const stream = providerA.responses.stream(
          { model: "chatgen-4o", input: "Tell a story" },
          { headers: { "x-simulator-fault": "mid_stream_error", "x-simulator-fault-after": "3" } }
        )
        const events = yield* collectAsync(stream)
        expect(events.map((event) => event.type)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "error"])
        const last = events.at(-1)
        expect(last?.type === "error" ? last.message : undefined).toMatch(/interrupted/)
      }))
  })
})
