// The messages request as provider_b validates it.
import { Schema } from "effect"
import { arrayAtLeast, integerBetween, numberBetween } from "../rangeChecks"

/** A content block; the fields of every block type the simulated model reads, others pass through. */
export const ContentBlock = Schema.Struct({
  type: Schema.String,
  text: Schema.optional(Schema.String),
  source: Schema.optional(Schema.Unknown),
  id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  input: Schema.optional(Schema.Unknown),
  tool_use_id: Schema.optional(Schema.String),
  content: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) })))),
  is_error: Schema.optional(Schema.Boolean),
  thinking: Schema.optional(Schema.String),
  signature: Schema.optional(Schema.String)
})
export type ContentBlock = typeof ContentBlock.Type

export const InputMessage = Schema.Struct({
  role: Schema.Literal("user", "assistant"),
  content: Schema.Union(Schema.String, Schema.Array(ContentBlock))
})
export type InputMessage = typeof InputMessage.Type

export const ToolDefinition = Schema.Struct({
  type: Schema.optional(Schema.String),
  name: Schema.String,
  description: Schema.optional(Schema.String),
  input_schema: Schema.optional(Schema.Unknown)
})

export const ToolChoice = Schema.Struct({
  type: Schema.Literal("auto", "any", "tool", "none"),
  name: Schema.optional(Schema.String),
  disable_parallel_tool_use: Schema.optional(Schema.Boolean)
})

export const ThinkingConfig = Schema.Union(
  Schema.Struct({ type: Schema.Literal("enabled"), budget_tokens: integerBetween(1024) }),
  Schema.Struct({ type: Schema.Literal("disabled") })
)

export const MessagesRequest = Schema.Struct({
  model: Schema.String,
  messages: arrayAtLeast(InputMessage, 1),
  max_tokens: integerBetween(1),
  metadata: Schema.optional(Schema.Struct({ user_id: Schema.optional(Schema.NullOr(Schema.String)) })),
  stop_sequences: Schema.optional(Schema.Array(Schema.String)),
  stream: Schema.optional(Schema.Boolean),
  system: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })))),
  temperature: Schema.optional(numberBetween(0, 1)),
  top_k: Schema.optional(integerBetween(0)),
  top_p: Schema.optional(numberBetween(0, 1)),
  tools: Schema.optional(Schema.Array(ToolDefinition)),
  tool_choice: Schema.optional(ToolChoice),
  thinking: Schema.optional(ThinkingConfig),
  service_tier: Schema.optional(Schema.Literal("auto", "standard_only"))
})
export type MessagesRequest = typeof MessagesRequest.Type

/** Every top-level parameter provider_b accepts, including those the simulated model ignores. */
export const knownMessagesFields: ReadonlySet<string> = new Set([
  ...Object.keys(MessagesRequest.fields),
  "container",
  "context_management",
  "mcp_servers",
  "output_format",
  "output_config",
  "inference_geo"
])

/** The token-counting request: a messages request without what only generation reads (max_tokens, sampling, stream). */
const {
  max_tokens: _maxTokens,
  metadata: _metadata,
  service_tier: _serviceTier,
  stop_sequences: _stopSequences,
  stream: _stream,
  temperature: _temperature,
  top_k: _topK,
  top_p: _topP,
  ...countTokensFields
} = MessagesRequest.fields

export const CountTokensRequest = Schema.Struct(countTokensFields)
export type CountTokensRequest = typeof CountTokensRequest.Type

export const knownCountTokensFields: ReadonlySet<string> = new Set([
  ...Object.keys(CountTokensRequest.fields),
  "context_management",
  "mcp_servers",
  "output_format",
  "output_config"
])
