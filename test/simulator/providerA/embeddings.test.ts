import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import ProviderAClient from "openai"
import { embed, toBase64 } from "../../../src/simulator/providerA/embeddings"
import { SimulatorAddress } from "../../../src/simulator/server"
import { failureOf, simulatorTestLayer } from "../harness"

const client = Effect.map(SimulatorAddress, ({ baseUrl }) => new ProviderAClient({ baseURL: `${baseUrl}/v1`, apiKey: "test-key", maxRetries: 0 }))

const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0)

describe("embed", () => {
  it("gives unit vectors, equal for equal texts, closer for texts sharing words", () => {
    const cat = Array.from(embed("the cat sat on the mat", 1536))
    const norm = Math.sqrt(cat.reduce((sum, x) => sum + x * x, 0))
    expect(norm).toBeCloseTo(1, 5)
    expect(Array.from(embed("the cat sat on the mat", 1536))).toEqual(cat)
    const similar = Array.from(embed("a cat sat on a mat", 1536))
    const unrelated = Array.from(embed("quarterly revenue forecast", 1536))
    expect(cosine(cat, similar)).toBeGreaterThan(cosine(cat, unrelated) + 0.3)
  })

  it("encodes base64 as little-endian float32", () => {
    const vector = Float32Array.from([1, -0.5, 0.25])
    const bytes = Buffer.from(toBase64(vector), "base64")
    expect(bytes.length).toBe(12)
    expect([bytes.readFloatLE(0), bytes.readFloatLE(4), bytes.readFloatLE(8)]).toEqual([1, -0.5, 0.25])
  })
})

describe("provider_a embeddings", () => {
  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("answers the SDK's default base64 request with the same vectors as a float request", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const input = ["hello world", "goodbye world"]
        const viaBase64 = yield* Effect.promise(() => providerA.embeddings.create({ model: "text-embedding-ada-002", input }))
        const viaFloat = yield* Effect.promise(() =>
          providerA.embeddings.create({ model: "text-embedding-ada-002", input, encoding_format: "float" })
        )
        expect(viaBase64.object).toBe("list")
        expect(viaBase64.data.map((item) => item.index)).toEqual([0, 1])
        expect(viaBase64.data[0]?.embedding).toHaveLength(1536)
        expect(viaBase64.data[0]?.embedding).toEqual(viaFloat.data[0]?.embedding)
        expect(viaBase64.usage.prompt_tokens).toBe(viaBase64.usage.total_tokens)
        expect(viaBase64.usage.prompt_tokens).toBeGreaterThanOrEqual(4)
      })
    )

    it.effect("shortens vectors on request only for models that allow it", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const short = yield* Effect.promise(() =>
          providerA.embeddings.create({ model: "text-embedding-3-small", input: "hi", dimensions: 64, encoding_format: "float" })
        )
        expect(short.data[0]?.embedding).toHaveLength(64)
        const refused = yield* failureOf(() => providerA.embeddings.create({ model: "text-embedding-ada-002", input: "hi", dimensions: 64 }))
        expect(refused).toBeInstanceOf(ProviderAClient.BadRequestError)
        expect((refused as InstanceType<typeof ProviderAClient.BadRequestError>).param).toBe("dimensions")
      })
    )

    it.effect("counts token-array inputs by their length and rejects inputs over the limit", () =>
      Effect.gen(function* () {
        const providerA = yield* client
        const tokens = yield* Effect.promise(() =>
          providerA.embeddings.create({ model: "text-embedding-ada-002", input: [[1, 2, 3], [4, 5]], encoding_format: "float" })
        )
        expect(tokens.data).toHaveLength(2)
        expect(tokens.usage.prompt_tokens).toBe(5)
        const tooLong = yield* failureOf(() =>
          providerA.embeddings.create({ model: "text-embedding-ada-002", input: Array.from({ length: 8193 }, () => 1) })
        )
        expect((tooLong as Error).message).toMatch(/maximum context length is 8192/)
        const empty = yield* failureOf(() => providerA.embeddings.create({ model: "text-embedding-ada-002", input: "" }))
        expect(empty).toBeInstanceOf(ProviderAClient.BadRequestError)
      })
    )
  })
})
