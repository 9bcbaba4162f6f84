/**
 * provider_b messages: request, response, stream events and error body, in the provider's exact
 * wire format (what the provider's official client library sends and parses).
 *
 * The spec says every parameter of the provider's create-message operation is supported, so the
 * request objects keep the members they do not name (thinking, service_tier, citations, …) for
 * forwarding, while the members they do name are validated. The model is checked later by a
 * service against the catalog (it depends on the workspace), not here.
 */
import { Schema } from "effect"
import {
  boolean,
  describeValue,
  integerAtLeast,
  jsonObject,
  nonEmptyString,
  numberBetween,
  oneOf,
  optionalParam,
  string
} from "../../domain/fieldSchemas"

/** Members not named by a schema are kept as they are (forwarded to the provider). */
const OtherMembers = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const IMAGE_MEDIA_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const

// ---------------------------------------------------------------------------------------------
// Request: content blocks
// ---------------------------------------------------------------------------------------------

export const CacheControl = Schema.Struct({
  type: Schema.Literal("ephemeral"),
  ttl: optionalParam(oneOf("cache_control.ttl", "5m", "1h"))
}, OtherMembers)

export const TextBlockParam = Schema.Struct({
  type: Schema.Literal("text"),
  text: string("A text block's text"),
  cache_control: optionalParam(CacheControl)
}, OtherMembers)

/** Images are sent base64-encoded (the spec); a URL source would make the upstream fetch for the caller. */
export const Base64ImageSource = Schema.Struct({
  type: Schema.Literal("base64").annotations({
    message: (issue) => ({
      message: `Image source type ${describeValue(issue.actual)} is not supported: send the image base64-encoded, as { "type": "base64", "media_type", "data" }.`,
      override: true
    })
  }),
  media_type: Schema.Literal(...IMAGE_MEDIA_TYPES).annotations({
    message: (issue) => ({
      message: `Image media_type ${describeValue(issue.actual)} is not supported: use one of ${
        IMAGE_MEDIA_TYPES.join(", ")
      }.`,
      override: true
    })
  }),
  data: string("An image source's data (base64)")
}, OtherMembers)

export const ImageBlockParam = Schema.Struct({
  type: Schema.Literal("image"),
  source: Base64ImageSource,
  cache_control: optionalParam(CacheControl)
}, OtherMembers)

export const ToolUseBlockParam = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: string("A tool_use block's id"),
  name: string("A tool_use block's name"),
  input: jsonObject("A tool_use block's input"),
  cache_control: optionalParam(CacheControl)
}, OtherMembers)

/** Blocks accepted as they are: only their type is checked, the provider validates the rest. */
const looseBlock = <T extends string>(type: T) => Schema.Struct({ type: Schema.Literal(type) }, OtherMembers)

export const DocumentBlockParam = looseBlock("document")
export const SearchResultBlockParam = looseBlock("search_result")
export const ThinkingBlockParam = looseBlock("thinking")
export const RedactedThinkingBlockParam = looseBlock("redacted_thinking")
/** What the provider's own (server) tools left in the history: sent back as they came. */
export const ServerToolBlockParams = [
  looseBlock("server_tool_use"),
  looseBlock("web_search_tool_result"),
  looseBlock("web_fetch_tool_result"),
  looseBlock("code_execution_tool_result"),
  looseBlock("bash_code_execution_tool_result"),
  looseBlock("text_editor_code_execution_tool_result"),
  looseBlock("mcp_tool_use"),
  looseBlock("mcp_tool_result"),
  looseBlock("container_upload")
] as const

const toolResultBlocks = Schema.Array(
  Schema.Union(TextBlockParam, ImageBlockParam, DocumentBlockParam, SearchResultBlockParam)
).annotations({ title: "an array of content blocks" })

export const ToolResultBlockParam = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: string("A tool_result block's tool_use_id"),
  content: optionalParam(Schema.Union(Schema.String, toolResultBlocks)),
  is_error: optionalParam(boolean("A tool_result block's is_error")),
  cache_control: optionalParam(CacheControl)
}, OtherMembers)

export const ContentBlockParam = Schema.Union(
  TextBlockParam,
  ImageBlockParam,
  ToolUseBlockParam,
  ToolResultBlockParam,
  DocumentBlockParam,
  SearchResultBlockParam,
  ThinkingBlockParam,
  RedactedThinkingBlockParam,
  ...ServerToolBlockParams
)
export type ContentBlockParam = typeof ContentBlockParam.Type

// ---------------------------------------------------------------------------------------------
// Request: messages, system, tools
// ---------------------------------------------------------------------------------------------

export const MessageParam = Schema.Struct({
  role: Schema.Literal("user", "assistant").annotations({
    message: (issue) => ({
      message: issue.actual === "system"
        ? "messages[].role must be \"user\" or \"assistant\": put the system prompt in the top-level system parameter."
        : `messages[].role must be "user" or "assistant", got ${describeValue(issue.actual)}.`,
      override: true
    })
  }),
  content: Schema.Union(
    Schema.String,
    Schema.Array(ContentBlockParam).annotations({ title: "an array of content blocks" })
  )
}, OtherMembers).annotations({ title: "a message object" })
export type MessageParam = typeof MessageParam.Type

export const SystemPrompt = Schema.Union(
  Schema.String,
  Schema.Array(TextBlockParam).annotations({ title: "an array of text blocks" })
)

/** A tool of the caller's own: the model sees its name, description and input schema. */
export const CustomToolDefinition = Schema.Struct({
  name: nonEmptyString("tools[].name"),
  description: optionalParam(string("tools[].description")),
  input_schema: jsonObject("tools[].input_schema (a JSON Schema)"),
  type: optionalParam(Schema.Literal("custom")),
  cache_control: optionalParam(CacheControl)
}, OtherMembers)

/**
 * One of the provider's own tools (web search, code execution, …), named by a versioned type such
 * as `web_search_20250305`: no input schema; its other options are the provider's to check.
 */
export const ServerToolDefinition = Schema.Struct({
  type: Schema.String.pipe(Schema.pattern(/^[a-z][a-z0-9_]*_\d{8}$/)),
  name: nonEmptyString("tools[].name"),
  cache_control: optionalParam(CacheControl)
}, OtherMembers)

export const ToolDefinition = Schema.Union(CustomToolDefinition, ServerToolDefinition)
export type ToolDefinition = typeof ToolDefinition.Type

export const ToolChoice = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("auto", "any", "none"),
    disable_parallel_tool_use: optionalParam(boolean("tool_choice.disable_parallel_tool_use"))
  }, OtherMembers),
  Schema.Struct({
    type: Schema.Literal("tool"),
    name: string("tool_choice.name"),
    disable_parallel_tool_use: optionalParam(boolean("tool_choice.disable_parallel_tool_use"))
  }, OtherMembers)
)
export type ToolChoice = typeof ToolChoice.Type

export const RequestMetadata = Schema.Struct({
  user_id: optionalParam(string("metadata.user_id"))
}, OtherMembers)

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

export const MessagesRequest = Schema.Struct({
  model: nonEmptyString("model"),
  messages: Schema.Array(MessageParam).annotations({
    message: (issue) => `messages must be an array of message objects, got ${describeValue(issue.actual)}.`
  }).pipe(
    Schema.minItems(1, { message: () => "messages must contain at least one message." }),
    Schema.filter((messages) =>
      messages[0]?.role === "user" ? undefined : {
        path: [0, "role"],
        message: "messages[0].role must be \"user\": the first message must come from the user."
      }
    )
  ),
  max_tokens: integerAtLeast("max_tokens", 1),
  stop_sequences: optionalParam(
    Schema.Array(Schema.String).annotations({
      message: (issue) => ({
        message: `stop_sequences must be an array of strings, got ${describeValue(issue.actual)}.`,
        override: true
      })
    })
  ),
  stream: optionalParam(boolean("stream")),
  system: optionalParam(SystemPrompt),
  temperature: optionalParam(numberBetween("temperature", 0, 1)),
  top_k: optionalParam(integerAtLeast("top_k", 0)),
  top_p: optionalParam(numberBetween("top_p", 0, 1)),
  tools: optionalParam(Schema.Array(ToolDefinition)),
  tool_choice: optionalParam(ToolChoice),
  metadata: optionalParam(RequestMetadata)
}, OtherMembers).annotations({ identifier: "MessagesRequest" })
export type MessagesRequest = typeof MessagesRequest.Type

/**
 * The token-counting request (`POST /v1/messages/count_tokens`): what a messages request says of its input,
 * checked the same way, without max_tokens (the client library sends none); other members pass through.
 */
export const CountTokensRequest = Schema.Struct({
  model: MessagesRequest.fields.model,
  messages: MessagesRequest.fields.messages,
  system: MessagesRequest.fields.system,
  tools: MessagesRequest.fields.tools,
  tool_choice: MessagesRequest.fields.tool_choice
}, OtherMembers).annotations({ identifier: "CountTokensRequest" })
export type CountTokensRequest = typeof CountTokensRequest.Type

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

/** The token count: the input tokens of the messages, system prompt and tools. */
export const MessageTokensCount = Schema.Struct({ input_tokens: Schema.Int }).annotations({ identifier: "MessageTokensCount" })

export const StopReason = Schema.Literal(
  "end_turn",
  "max_tokens",
  "stop_sequence",
  "tool_use",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded"
)
export type StopReason = typeof StopReason.Type

export const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  citations: Schema.optionalWith(Schema.NullOr(Schema.Array(Schema.Unknown)), { exact: true })
})

export const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

export const ThinkingBlock = Schema.Struct({
  type: Schema.Literal("thinking"),
  thinking: Schema.String,
  signature: Schema.String
})

export const RedactedThinkingBlock = Schema.Struct({
  type: Schema.Literal("redacted_thinking"),
  data: Schema.String
})

export const ContentBlock = Schema.Union(TextBlock, ToolUseBlock, ThinkingBlock, RedactedThinkingBlock)
export type ContentBlock = typeof ContentBlock.Type

const nullableCount = Schema.optionalWith(Schema.NullOr(Schema.Int), { exact: true })

export const MessageUsage = Schema.Struct({
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  cache_creation_input_tokens: nullableCount,
  cache_read_input_tokens: nullableCount,
  cache_creation: Schema.optionalWith(Schema.Unknown, { exact: true }),
  server_tool_use: Schema.optionalWith(Schema.Unknown, { exact: true }),
  service_tier: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true })
})
export type MessageUsage = typeof MessageUsage.Type

export const Message = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("message"),
  role: Schema.Literal("assistant"),
  model: Schema.String,
  content: Schema.Array(ContentBlock),
  stop_reason: Schema.NullOr(StopReason),
  stop_sequence: Schema.NullOr(Schema.String),
  usage: MessageUsage
}).annotations({ identifier: "Message" })
export type Message = typeof Message.Type

// ---------------------------------------------------------------------------------------------
// Stream events: each is sent as `event: <type>` followed by `data: <the JSON below>`
// ---------------------------------------------------------------------------------------------

/** First event: the message with empty content, null stop_reason and the input token count. */
export const MessageStartEvent = Schema.Struct({
  type: Schema.Literal("message_start"),
  message: Message
})

export const ContentBlockStartEvent = Schema.Struct({
  type: Schema.Literal("content_block_start"),
  index: Schema.Int,
  content_block: ContentBlock
})

export const TextDelta = Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String })
export const InputJsonDelta = Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String })
export const ThinkingDelta = Schema.Struct({ type: Schema.Literal("thinking_delta"), thinking: Schema.String })
export const SignatureDelta = Schema.Struct({ type: Schema.Literal("signature_delta"), signature: Schema.String })
export const CitationsDelta = Schema.Struct({ type: Schema.Literal("citations_delta"), citation: Schema.Unknown })

export const ContentBlockDeltaEvent = Schema.Struct({
  type: Schema.Literal("content_block_delta"),
  index: Schema.Int,
  delta: Schema.Union(TextDelta, InputJsonDelta, ThinkingDelta, SignatureDelta, CitationsDelta)
})

export const ContentBlockStopEvent = Schema.Struct({
  type: Schema.Literal("content_block_stop"),
  index: Schema.Int
})

/** Carries the stop reason and the cumulative output token count (the client requires it). */
export const MessageDeltaEvent = Schema.Struct({
  type: Schema.Literal("message_delta"),
  delta: Schema.Struct({
    stop_reason: Schema.NullOr(StopReason),
    stop_sequence: Schema.NullOr(Schema.String)
  }),
  usage: Schema.Struct({
    output_tokens: Schema.Int,
    input_tokens: nullableCount,
    cache_creation_input_tokens: nullableCount,
    cache_read_input_tokens: nullableCount
  })
})

export const MessageStopEvent = Schema.Struct({ type: Schema.Literal("message_stop") })

export const PingEvent = Schema.Struct({ type: Schema.Literal("ping") })

// ---------------------------------------------------------------------------------------------
// Error body (also the data of an in-stream `event: error`)
// ---------------------------------------------------------------------------------------------

/** The error types the client library knows. */
export const ProviderBErrorType = Schema.Literal(
  "invalid_request_error",
  "authentication_error",
  "billing_error",
  "permission_error",
  "not_found_error",
  "request_too_large",
  "rate_limit_error",
  "timeout_error",
  "api_error",
  "overloaded_error"
)
export type ProviderBErrorType = typeof ProviderBErrorType.Type

/** `{ type: "error", error: { type, message }, request_id? }`; error.type stays open to new types. */
export const ProviderBErrorBody = Schema.Struct({
  type: Schema.Literal("error"),
  error: Schema.Struct({
    type: Schema.String,
    message: Schema.String
  }),
  request_id: Schema.optionalWith(Schema.String, { exact: true })
}).annotations({ identifier: "ProviderBErrorBody" })
export type ProviderBErrorBody = typeof ProviderBErrorBody.Type

export const MessageStreamEvent = Schema.Union(
  MessageStartEvent,
  ContentBlockStartEvent,
  ContentBlockDeltaEvent,
  ContentBlockStopEvent,
  MessageDeltaEvent,
  MessageStopEvent,
  PingEvent,
  ProviderBErrorBody
)
export type MessageStreamEvent = typeof MessageStreamEvent.Type
