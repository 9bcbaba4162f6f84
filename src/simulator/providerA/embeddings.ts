// provider_a embeddings: deterministic unit vectors in which texts sharing words point the same way.
import { Effect, Either, Schema } from "effect"
import { embeddingModels } from "../catalog"
import { hashString, makeRandom } from "../deterministic"
import { jsonReply, type SimulatedEndpoint } from "../endpoint"
import { decodeRequest, rejectUnknownFields } from "../requestBody"
import { SimulatorError } from "../simulatorError"
import { SimulatorTokenizer } from "../tokenizer"
import { providerADialect } from "./dialect"
import { arrayAtLeast, arrayAtMost, integerBetween } from "../rangeChecks"

const NonEmptyText = Schema.String.pipe(
  Schema.filter((text) => (text.length === 0 ? "'$.input' is invalid. Please check the API reference." : true))
)
const TokenArray = arrayAtLeast(Schema.Int, 1)

export const EmbeddingsRequest = Schema.Struct({
  model: Schema.String,
  input: Schema.Union(NonEmptyText, arrayAtMost(NonEmptyText, 2048), TokenArray, arrayAtMost(TokenArray, 2048)),
  encoding_format: Schema.optional(Schema.Literal("float", "base64")),
  dimensions: Schema.optional(integerBetween(1)),
  user: Schema.optional(Schema.String)
})
export type EmbeddingsRequest = typeof EmbeddingsRequest.Type

type EmbeddingInput = string | ReadonlyArray<number>

/** A single input and arrays of inputs become one list; a bare token array is one input. */
export const inputsOf = (input: EmbeddingsRequest["input"]): ReadonlyArray<EmbeddingInput> => {
  if (typeof input === "string") return [input]
  const [first] = input
  return typeof first === "number" ? [input as ReadonlyArray<number>] : (input as ReadonlyArray<EmbeddingInput>)
}

const featuresOf = (input: EmbeddingInput): ReadonlyArray<string> =>
  typeof input === "string" ? (input.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [input]) : input.map((token) => `#${token}`)

/**
 * Feature hashing: every word adds a fixed random direction, plus a little noise specific to the whole input,
 * so equal texts give equal vectors and texts sharing words have a higher cosine similarity.
 */
export const embed = (input: EmbeddingInput, dimensions: number): Float32Array => {
  const vector = new Float64Array(dimensions)
  for (const feature of featuresOf(input)) {
    const random = makeRandom(hashString(feature, 7))
    for (let k = 0; k < 8; k++) vector[random.int(0, dimensions - 1)]! += random.next() < 0.5 ? -1 : 1
  }
  const noise = makeRandom(hashString(typeof input === "string" ? input : input.join(","), 11))
  for (let i = 0; i < dimensions; i++) vector[i]! += (noise.next() - 0.5) * 0.1
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0)) || 1
  return Float32Array.from(vector, (x) => x / norm)
}

/** Little-endian float32 bytes in base64, as the provider encodes `encoding_format: "base64"`. */
export const toBase64 = (vector: Float32Array): string => {
  const bytes = Buffer.alloc(vector.length * 4)
  vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4))
  return bytes.toString("base64")
}

export const embeddingsEndpoint: SimulatedEndpoint<SimulatorTokenizer> = {
  dialect: providerADialect,
  answer: (body) =>
    Effect.gen(function* () {
      const counter = yield* SimulatorTokenizer
      yield* rejectUnknownFields(
        body,
        new Set(Object.keys(EmbeddingsRequest.fields)),
        (field) => `Unrecognized request argument supplied: ${field}`
      )
      const request = yield* decodeRequest(EmbeddingsRequest, body)
      const model = embeddingModels.get(request.model)
      if (model === undefined) {
        return yield* new SimulatorError({
          kind: "not_found",
          message: `The model \`${request.model}\` does not exist or you do not have access to it.`,
          code: "model_not_found"
        })
      }
      if (request.dimensions !== undefined && !model.acceptsDimensions) {
        return yield* new SimulatorError({ kind: "invalid_request", message: "This model does not support specifying dimensions.", path: ["dimensions"] })
      }
      if (request.dimensions !== undefined && request.dimensions > model.dimensions) {
        return yield* new SimulatorError({
          kind: "invalid_request",
          message: `This model supports at most ${model.dimensions} dimensions.`,
          path: ["dimensions"]
        })
      }
      const inputs = inputsOf(request.input)
      const tokenCounts = inputs.map((input) => (typeof input === "string" ? counter.count(input) : input.length))
      const tooLong = tokenCounts.findIndex((tokens) => tokens > model.maxInputTokens)
      if (tooLong >= 0) {
        yield* Either.left(
          new SimulatorError({
            kind: "invalid_request",
            message: `This model's maximum context length is ${model.maxInputTokens} tokens, however you requested ${tokenCounts[tooLong]} tokens (${tokenCounts[tooLong]} in your prompt; 0 for the completion). Please reduce your prompt; or completion length.`,
            path: ["input"]
          })
        )
      }
      const dimensions = request.dimensions ?? model.dimensions
      const promptTokens = tokenCounts.reduce((sum, tokens) => sum + tokens, 0)
      return jsonReply({
        object: "list",
        data: inputs.map((input, index) => {
          // Shortened vectors are the leading dimensions, renormalised, as with the newer models.
          const full = embed(input, model.dimensions)
          const cut = full.subarray(0, dimensions)
          const norm = Math.sqrt(cut.reduce((sum, x) => sum + x * x, 0)) || 1
          const vector = dimensions === model.dimensions ? full : Float32Array.from(cut, (x) => x / norm)
          return {
            object: "embedding",
            index,
            embedding: request.encoding_format === "base64" ? toBase64(vector) : Array.from(vector)
          }
        }),
        model: request.model,
        usage: { prompt_tokens: promptTokens, total_tokens: promptTokens }
      })
    })
}
