/**
 * provider_a embeddings: request and response in the provider's wire format (what the provider's
 * official client library sends and parses). Errors use the provider_a error body of chat completions.
 *
 * The token limit per input (8192) needs a tokenizer and is checked by the service, as is the
 * model (only text-embedding-ada-002, which also refuses `dimensions`).
 */
import { Schema } from "effect"
import { describeValue, integerAtLeast, nonEmptyString, oneOf, optionalParam, string } from "../../domain/fieldSchemas"

export { ProviderAErrorBody } from "./chatCompletionsWire"

/** The provider's limit on the number of inputs in one request. */
export const MAX_EMBEDDING_INPUTS = 2048

/** One text, several texts, one token array, or several token arrays. */
export type EmbeddingInputValue =
  | string
  | ReadonlyArray<string>
  | ReadonlyArray<number>
  | ReadonlyArray<ReadonlyArray<number>>

type InputItemKind = "string" | "token" | "token array"

const KIND_DESCRIPTIONS: Record<InputItemKind, string> = {
  string: "a string",
  token: "a token id (an integer >= 0)",
  "token array": "an array of token ids"
}

const kindOf = (item: unknown): InputItemKind | undefined =>
  typeof item === "string"
    ? "string"
    : typeof item === "number"
    ? "token"
    : Array.isArray(item)
    ? "token array"
    : undefined

const isToken = (value: unknown): boolean => typeof value === "number" && Number.isInteger(value) && value >= 0

interface InputProblem {
  readonly path: ReadonlyArray<number>
  readonly message: string
}

const itemProblem = (item: unknown, index: number, kind: InputItemKind): InputProblem | undefined => {
  if (kindOf(item) !== kind) {
    return {
      path: [index],
      message: `input[${index}] must be ${KIND_DESCRIPTIONS[kind]} like input[0], got ${describeValue(item)}.`
    }
  }
  if (kind === "string" && item === "") {
    return { path: [index], message: `input[${index}] must not be an empty string.` }
  }
  if (kind === "token" && !isToken(item)) {
    return {
      path: [index],
      message: `input[${index}] must be a token id (an integer >= 0), got ${describeValue(item)}.`
    }
  }
  if (kind === "token array" && Array.isArray(item)) {
    if (item.length === 0) return { path: [index], message: `input[${index}] must not be an empty array of tokens.` }
    const badToken = item.findIndex((token) => !isToken(token))
    if (badToken >= 0) {
      return {
        path: [index, badToken],
        message: `input[${index}][${badToken}] must be a token id (an integer >= 0), got ${
          describeValue(item[badToken])
        }.`
      }
    }
  }
  return undefined
}

/** The first problem of an input, with its path below `input`. */
export const embeddingInputProblem = (
  input: string | ReadonlyArray<unknown>
): InputProblem | undefined => {
  if (typeof input === "string") {
    return input === "" ? { path: [], message: "input must not be an empty string." } : undefined
  }
  if (input.length === 0) return { path: [], message: "input must not be an empty array." }
  if (input.length > MAX_EMBEDDING_INPUTS) {
    return { path: [], message: `input must contain at most ${MAX_EMBEDDING_INPUTS} items, got ${input.length}.` }
  }
  const kind = kindOf(input[0])
  if (kind === undefined) {
    return { path: [0], message: `input[0] must be a string, a token id or an array of token ids.` }
  }
  for (const [index, item] of input.entries()) {
    const problem = itemProblem(item, index, kind)
    if (problem !== undefined) return problem
  }
  return undefined
}

const isEmbeddingInputValue = (input: string | ReadonlyArray<unknown>): input is EmbeddingInputValue =>
  embeddingInputProblem(input) === undefined

const token = { type: "integer", minimum: 0 }

export const EmbeddingInput = Schema.Union(Schema.String, Schema.Array(Schema.Unknown)).annotations({
  // Items are checked by the filter below (exact index in the message); this documents them.
  jsonSchema: {
    anyOf: [
      { type: "string", minLength: 1 },
      { type: "array", minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: { type: "string", minLength: 1 } },
      { type: "array", minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: token },
      {
        type: "array",
        minItems: 1,
        maxItems: MAX_EMBEDDING_INPUTS,
        items: { type: "array", minItems: 1, items: token }
      }
    ]
  },
  message: (issue) => ({
    message: `input must be a string, an array of strings, an array of token ids or an array of token arrays, got ${
      describeValue(issue.actual)
    }.`,
    override: true
  })
}).pipe(
  // Reports the exact offending item (`input[2]`) with a sentence naming it.
  Schema.filter((input) => embeddingInputProblem(input)),
  // Never fails after the check above; narrows the type for the service.
  Schema.filter(isEmbeddingInputValue)
)

export const EmbeddingRequest = Schema.Struct({
  input: EmbeddingInput,
  model: nonEmptyString("model"),
  encoding_format: optionalParam(oneOf("encoding_format", "float", "base64")),
  dimensions: optionalParam(integerAtLeast("dimensions", 1)),
  user: optionalParam(string("user"))
}).annotations({ identifier: "EmbeddingRequest" })
export type EmbeddingRequest = typeof EmbeddingRequest.Type

export const Embedding = Schema.Struct({
  object: Schema.Literal("embedding"),
  index: Schema.Int,
  /** Floats, or with `encoding_format: "base64"` their little-endian float32 bytes in base64. */
  embedding: Schema.Union(Schema.Array(Schema.Number), Schema.String)
})
export type Embedding = typeof Embedding.Type

export const EmbeddingUsage = Schema.Struct({
  prompt_tokens: Schema.Int,
  total_tokens: Schema.Int
})

export const CreateEmbeddingResponse = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Embedding),
  model: Schema.String,
  usage: EmbeddingUsage
}).annotations({ identifier: "CreateEmbeddingResponse" })
export type CreateEmbeddingResponse = typeof CreateEmbeddingResponse.Type
