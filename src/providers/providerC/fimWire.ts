/**
 * provider_c FIM (fill-in-the-middle) completions: request, response, stream chunk and error body,
 * in the provider's wire format (what the provider's official client library sends and parses;
 * it always sends `"stream": false|true` and validates responses strictly).
 *
 * Whether the model is the compatible one, and prompt tokens + max_tokens against the model's
 * context length, are checked by the service.
 */
import { Schema } from "effect"
import { DEFAULT_FIM_MODEL } from "../../domain/models"
import {
  boolean,
  integerAtLeast,
  nonEmptyString,
  numberBetween,
  optionalParam,
  string,
  stringOrStrings
} from "../../domain/fieldSchemas"

export const FimCompletionRequest = Schema.Struct({
  model: Schema.optionalWith(nonEmptyString("model"), {
    exact: true,
    nullable: true,
    default: () => DEFAULT_FIM_MODEL
  }),
  prompt: string("prompt"),
  suffix: Schema.optionalWith(string("suffix"), { exact: true, nullable: true, default: () => "" }),
  temperature: optionalParam(numberBetween("temperature", 0, 1.5)),
  top_p: optionalParam(numberBetween("top_p", 0, 1)),
  max_tokens: optionalParam(integerAtLeast("max_tokens", 0)),
  min_tokens: optionalParam(integerAtLeast("min_tokens", 0)),
  random_seed: optionalParam(integerAtLeast("random_seed", 0)),
  stop: optionalParam(stringOrStrings("stop")),
  stream: Schema.optionalWith(boolean("stream"), { exact: true, nullable: true, default: () => false }),
  metadata: optionalParam(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  prompt_cache_key: optionalParam(string("prompt_cache_key"))
}).annotations({ identifier: "FimCompletionRequest" })
export type FimCompletionRequest = typeof FimCompletionRequest.Type

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

/** Counters the client requires as integers. */
export const FimUsage = Schema.Struct({
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  total_tokens: Schema.Int
})

export const FimFinishReason = Schema.Literal("stop", "length", "model_length", "error", "tool_calls")
export type FimFinishReason = typeof FimFinishReason.Type

export const FimChoice = Schema.Struct({
  index: Schema.Int,
  message: Schema.Struct({
    role: Schema.Literal("assistant"),
    content: Schema.String,
    prefix: Schema.Boolean
  }),
  /** Never null in a full response: the client rejects a null finish_reason. */
  finish_reason: FimFinishReason
})

export const FimCompletionResponse = Schema.Struct({
  id: Schema.String,
  object: Schema.String,
  model: Schema.String,
  created: Schema.Int,
  usage: FimUsage,
  choices: Schema.Array(FimChoice)
}).annotations({ identifier: "FimCompletionResponse" })
export type FimCompletionResponse = typeof FimCompletionResponse.Type

export const FimChunkChoice = Schema.Struct({
  index: Schema.Int,
  delta: Schema.Struct({
    role: Schema.optionalWith(Schema.NullOr(Schema.Literal("assistant")), { exact: true }),
    content: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true })
  }),
  /** The key must be present in every chunk, null until the last one. */
  finish_reason: Schema.NullOr(FimFinishReason)
})

/** One data-only SSE event of a FIM stream (the stream ends with `data: [DONE]`). */
export const FimCompletionChunk = Schema.Struct({
  id: Schema.String,
  object: Schema.optionalWith(Schema.String, { exact: true }),
  created: Schema.optionalWith(Schema.Int, { exact: true }),
  model: Schema.String,
  choices: Schema.Array(FimChunkChoice),
  usage: Schema.optionalWith(FimUsage, { exact: true })
}).annotations({ identifier: "FimCompletionChunk" })
export type FimCompletionChunk = typeof FimCompletionChunk.Type

// ---------------------------------------------------------------------------------------------
// Error body
// ---------------------------------------------------------------------------------------------

/**
 * `{ object: "error", message, type, param, code }`: `message` is top-level so that the client's
 * SDKError, which embeds the raw body, shows it.
 */
export const ProviderCErrorBody = Schema.Struct({
  object: Schema.Literal("error"),
  message: Schema.String,
  type: Schema.String,
  param: Schema.NullOr(Schema.String),
  code: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ProviderCErrorBody" })
export type ProviderCErrorBody = typeof ProviderCErrorBody.Type
