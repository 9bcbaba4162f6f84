// The chat-completions request as provider_a validates it.
import { Schema } from "effect"
import { arrayAtLeast, arrayAtMost, integerBetween, numberBetween } from "../rangeChecks"

const nullable = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

/** A content part; only text and image parts matter to the simulated model, others pass through. */
export const ContentPart = Schema.Struct({
  type: Schema.String,
  text: Schema.optional(Schema.String)
})

export const ToolCall = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})

export const ChatMessage = Schema.Struct({
  role: Schema.Literal("system", "developer", "user", "assistant", "tool", "function"),
  content: nullable(Schema.Union(Schema.String, Schema.Array(ContentPart))),
  name: Schema.optional(Schema.String),
  tool_calls: Schema.optional(Schema.Array(ToolCall)),
  tool_call_id: Schema.optional(Schema.String),
  function_call: nullable(Schema.Struct({ name: Schema.String, arguments: Schema.String }))
})
export type ChatMessage = typeof ChatMessage.Type

export const FunctionDefinition = Schema.Struct({
  name: Schema.String,
  description: Schema.optional(Schema.String),
  parameters: Schema.optional(Schema.Unknown),
  strict: nullable(Schema.Boolean)
})

export const Tool = Schema.Struct({ type: Schema.Literal("function"), function: FunctionDefinition })

export const ToolChoice = Schema.Union(
  Schema.Literal("none", "auto", "required"),
  Schema.Struct({ type: Schema.Literal("function"), function: Schema.Struct({ name: Schema.String }) })
)

export const FunctionCallChoice = Schema.Union(Schema.Literal("none", "auto"), Schema.Struct({ name: Schema.String }))

export const ResponseFormat = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({ type: Schema.Literal("json_object") }),
  Schema.Struct({
    type: Schema.Literal("json_schema"),
    json_schema: Schema.Struct({
      name: Schema.String,
      description: Schema.optional(Schema.String),
      schema: Schema.optional(Schema.Unknown),
      strict: nullable(Schema.Boolean)
    })
  })
)

export const ChatCompletionRequest = Schema.Struct({
  model: Schema.String,
  messages: arrayAtLeast(ChatMessage, 1),
  max_tokens: nullable(integerBetween(1)),
  max_completion_tokens: nullable(integerBetween(1)),
  temperature: nullable(numberBetween(0, 2)),
  top_p: nullable(numberBetween(0, 1)),
  n: nullable(integerBetween(1, 128)),
  stream: nullable(Schema.Boolean),
  stream_options: nullable(Schema.Struct({ include_usage: Schema.optional(Schema.Boolean) })),
  stop: nullable(Schema.Union(Schema.String, arrayAtMost(Schema.String, 4))),
  presence_penalty: nullable(numberBetween(-2, 2)),
  frequency_penalty: nullable(numberBetween(-2, 2)),
  logit_bias: nullable(Schema.Record({ key: Schema.String, value: numberBetween(-100, 100) })),
  logprobs: nullable(Schema.Boolean),
  top_logprobs: nullable(integerBetween(0, 20)),
  response_format: Schema.optional(ResponseFormat),
  seed: nullable(Schema.Int),
  user: Schema.optional(Schema.String),
  tools: Schema.optional(arrayAtMost(Tool, 128)),
  tool_choice: Schema.optional(ToolChoice),
  parallel_tool_calls: Schema.optional(Schema.Boolean),
  functions: Schema.optional(arrayAtMost(FunctionDefinition, 128)),
  function_call: Schema.optional(FunctionCallChoice)
})
export type ChatCompletionRequest = typeof ChatCompletionRequest.Type

/** Every top-level parameter provider_a accepts, including those the simulated model ignores. */
export const knownChatCompletionFields: ReadonlySet<string> = new Set([
  ...Object.keys(ChatCompletionRequest.fields),
  "metadata",
  "store",
  "reasoning_effort",
  "modalities",
  "audio",
  "prediction",
  "service_tier",
  "verbosity",
  "web_search_options",
  "prompt_cache_key",
  "prompt_cache_retention",
  "safety_identifier"
])

/** provider_a's reasoning models: they refuse max_tokens and take max_completion_tokens. */
export const reasoningModels: ReadonlySet<string> = new Set([
  "o1",
  "o1-mini",
  "o1-preview",
  "o3",
  "o3-mini",
  "o4-mini",
  "chatgen-5",
  "chatgen-5-mini",
  "chatgen-5-nano"
])
