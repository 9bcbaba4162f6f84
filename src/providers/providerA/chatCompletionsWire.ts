/**
 * provider_a chat completions: request, response, stream chunk and error body, in the provider's
 * exact wire format (what the provider's official client library sends and parses).
 *
 * Unknown request fields are dropped when decoding. Whether a model exists is checked later by a
 * service against the catalog (it depends on the workspace), not here.
 */
import { Schema } from "effect"
import {
  boolean,
  integer,
  integerAtLeast,
  integerBetween,
  jsonObject,
  nonEmptyString,
  numberBetween,
  oneOf,
  optionalParam,
  string,
  stringOrStrings,
  describeValue
} from "../../domain/fieldSchemas"

export const MAX_TOOLS = 128
export const MAX_STOP_SEQUENCES = 4

// ---------------------------------------------------------------------------------------------
// Request: message content
// ---------------------------------------------------------------------------------------------

export const TextContentPart = Schema.Struct({
  type: Schema.Literal("text"),
  text: string("A text content part's text")
})

export const ImageContentPart = Schema.Struct({
  type: Schema.Literal("image_url"),
  image_url: Schema.Struct({
    url: string("image_url.url"),
    detail: optionalParam(oneOf("image_url.detail", "auto", "low", "high"))
  })
})

export const InputAudioContentPart = Schema.Struct({
  type: Schema.Literal("input_audio"),
  input_audio: Schema.Struct({
    data: string("input_audio.data"),
    format: oneOf("input_audio.format", "wav", "mp3")
  })
})

export const FileContentPart = Schema.Struct({
  type: Schema.Literal("file"),
  file: Schema.Struct({
    file_data: optionalParam(string("file.file_data")),
    file_id: optionalParam(string("file.file_id")),
    filename: optionalParam(string("file.filename"))
  })
})

export const RefusalContentPart = Schema.Struct({
  type: Schema.Literal("refusal"),
  refusal: string("A refusal content part's refusal")
})

const textParts = Schema.Array(TextContentPart).annotations({ title: "an array of text content parts" })

const userContentParts = Schema.Array(
  Schema.Union(TextContentPart, ImageContentPart, InputAudioContentPart, FileContentPart)
).annotations({ title: "an array of content parts" })

const assistantContentParts = Schema.Array(Schema.Union(TextContentPart, RefusalContentPart)).annotations({
  title: "an array of text or refusal content parts"
})

// ---------------------------------------------------------------------------------------------
// Request: messages
// ---------------------------------------------------------------------------------------------

/** A tool call the model made earlier, sent back in an assistant message. */
export const MessageToolCall = Schema.Struct({
  id: string("tool_calls[].id"),
  type: Schema.Literal("function"),
  function: Schema.Struct({
    name: string("tool_calls[].function.name"),
    arguments: string("tool_calls[].function.arguments")
  })
})

/** Deprecated single function call of an assistant message. */
export const MessageFunctionCall = Schema.Struct({
  name: string("function_call.name"),
  arguments: string("function_call.arguments")
})

export const SystemMessage = Schema.Struct({
  role: Schema.Literal("system"),
  content: Schema.Union(Schema.String, textParts),
  name: optionalParam(string("name"))
})

export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.Union(Schema.String, userContentParts),
  name: optionalParam(string("name"))
})

const hasItems = (items: ReadonlyArray<unknown> | undefined): boolean => items !== undefined && items.length > 0

export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: optionalParam(Schema.Union(Schema.String, assistantContentParts)),
  name: optionalParam(string("name")),
  refusal: optionalParam(string("refusal")),
  tool_calls: optionalParam(Schema.Array(MessageToolCall)),
  function_call: optionalParam(MessageFunctionCall),
  audio: optionalParam(Schema.Struct({ id: string("audio.id") }))
}).pipe(
  // The provider requires content unless the message carries what the model produced instead.
  Schema.filter((message) =>
    message.content !== undefined || hasItems(message.tool_calls) || message.function_call !== undefined ||
      message.refusal !== undefined || message.audio !== undefined
      ? undefined
      : {
        path: ["content"],
        message: "An assistant message needs content unless it has tool_calls or function_call."
      }
  )
)

export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  content: Schema.Union(Schema.String, textParts),
  tool_call_id: string("tool_call_id")
})

/** Deprecated: the result of a function call (role "function"). */
export const FunctionMessage = Schema.Struct({
  role: Schema.Literal("function"),
  content: Schema.NullOr(Schema.String),
  name: string("name")
})

export const ChatMessage = Schema.Union(
  SystemMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
  FunctionMessage
).annotations({ title: "a message object" })
export type ChatMessage = typeof ChatMessage.Type

// ---------------------------------------------------------------------------------------------
// Request: tools, functions, choices, response format
// ---------------------------------------------------------------------------------------------

const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/

const functionName = (field: string) =>
  string(field).pipe(Schema.pattern(FUNCTION_NAME, {
    message: (issue) =>
      `${field} must be 1 to 64 letters, digits, underscores or dashes (^[a-zA-Z0-9_-]{1,64}$), got ${
        describeValue(issue.actual)
      }.`
  }))

export const FunctionDefinition = Schema.Struct({
  name: functionName("tools[].function.name"),
  description: optionalParam(string("tools[].function.description")),
  parameters: optionalParam(jsonObject("tools[].function.parameters (a JSON Schema)")),
  strict: optionalParam(boolean("tools[].function.strict"))
})

export const FunctionTool = Schema.Struct({
  type: Schema.Literal("function"),
  function: FunctionDefinition
})
export type FunctionTool = typeof FunctionTool.Type

export const NamedToolChoice = Schema.Struct({
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: string("tool_choice.function.name") })
})

export const ToolChoice = Schema.Union(Schema.Literal("none", "auto", "required"), NamedToolChoice)
export type ToolChoice = typeof ToolChoice.Type

/** Deprecated `functions` entry. */
export const LegacyFunction = Schema.Struct({
  name: functionName("functions[].name"),
  description: optionalParam(string("functions[].description")),
  parameters: optionalParam(jsonObject("functions[].parameters (a JSON Schema)"))
})

/** Deprecated `function_call` request parameter. */
export const FunctionCallOption = Schema.Union(
  Schema.Literal("none", "auto"),
  Schema.Struct({ name: string("function_call.name") })
)

/** `{ type: "json_schema", json_schema: {…} }`: structured outputs, forwarded unchanged (the schema is the provider's to apply). */
export const JsonSchemaFormat = Schema.Struct({
  name: string("response_format.json_schema.name").pipe(Schema.pattern(FUNCTION_NAME, {
    message: (issue) =>
      `response_format.json_schema.name must be 1 to 64 letters, digits, underscores or dashes (^[a-zA-Z0-9_-]{1,64}$), got ${
        describeValue(issue.actual)
      }.`
  })),
  description: optionalParam(string("response_format.json_schema.description")),
  schema: optionalParam(jsonObject("response_format.json_schema.schema (a JSON Schema)")),
  strict: optionalParam(boolean("response_format.json_schema.strict"))
})

const responseFormatTypes = Schema.Literal("text", "json_object", "json_schema").annotations({
  message: (issue) => ({
    message: `response_format.type must be 'text', 'json_object' or 'json_schema', got ${describeValue(issue.actual)}.`,
    override: true
  })
})

/** `json_schema` is required with, and only read with, the type of the same name. */
export const ResponseFormat = Schema.Struct({
  type: responseFormatTypes,
  json_schema: optionalParam(JsonSchemaFormat)
}).pipe(
  Schema.filter((format) =>
    format.type === "json_schema" && format.json_schema === undefined
      ? { path: ["json_schema"], message: "response_format.json_schema is required when response_format.type is 'json_schema'." }
      : undefined
  )
)

const TOKEN_ID = /^\d+$/

/** Token id (an integer written as a string) → bias in [-100, 100]. */
export const LogitBias = Schema.Record({ key: Schema.String, value: numberBetween("logit_bias values", -100, 100) })
  .annotations({
    message: (issue) => `logit_bias must be an object mapping token ids to numbers, got ${describeValue(issue.actual)}.`
  })
  .pipe(Schema.filter((bias) => {
    // A Record silently drops keys its key schema rejects: check them here so a typo is reported.
    const badKey = Object.keys(bias).find((key) => !TOKEN_ID.test(key))
    return badKey === undefined ? undefined : {
      path: [badKey],
      message: `logit_bias keys must be token ids (integers written as strings), got ${describeValue(badKey)}.`
    }
  }))

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

/** Parameters the spec marks as not supported: accepted whatever they hold; the service decides. */
const unsupported = Schema.optionalWith(Schema.Unknown, { exact: true })

export const ChatCompletionRequest = Schema.Struct({
  model: nonEmptyString("model"),
  messages: Schema.Array(ChatMessage).annotations({
    message: (issue) => `messages must be an array of message objects, got ${describeValue(issue.actual)}.`
  }).pipe(Schema.minItems(1, { message: () => "messages must contain at least one message." })),
  max_tokens: optionalParam(integerAtLeast("max_tokens", 1)),
  max_completion_tokens: optionalParam(integerAtLeast("max_completion_tokens", 1)),
  temperature: optionalParam(numberBetween("temperature", 0, 2)),
  top_p: optionalParam(numberBetween("top_p", 0, 1)),
  frequency_penalty: optionalParam(numberBetween("frequency_penalty", -2, 2)),
  presence_penalty: optionalParam(numberBetween("presence_penalty", -2, 2)),
  logit_bias: optionalParam(LogitBias),
  logprobs: optionalParam(boolean("logprobs")),
  top_logprobs: optionalParam(integerBetween("top_logprobs", 0, 20)),
  stop: optionalParam(stringOrStrings("stop", MAX_STOP_SEQUENCES)),
  stream: optionalParam(boolean("stream")),
  response_format: optionalParam(ResponseFormat),
  seed: optionalParam(integer("seed")),
  user: optionalParam(string("user")),
  tools: optionalParam(
    Schema.Array(FunctionTool).pipe(Schema.maxItems(MAX_TOOLS, {
      message: () => `tools must contain at most ${MAX_TOOLS} tools.`
    }))
  ),
  tool_choice: optionalParam(ToolChoice),
  functions: optionalParam(
    Schema.Array(LegacyFunction).pipe(Schema.maxItems(MAX_TOOLS, {
      message: () => `functions must contain at most ${MAX_TOOLS} functions.`
    }))
  ),
  function_call: optionalParam(FunctionCallOption),
  // Beyond the spec table, but needed by the reasoning models of the catalog; passed through as is.
  reasoning_effort: optionalParam(string("reasoning_effort")),
  verbosity: optionalParam(string("verbosity")),
  n: unsupported,
  service_tier: unsupported,
  parallel_tool_calls: unsupported,
  stream_options: unsupported
}).pipe(
  Schema.filter((request) =>
    request.top_logprobs !== undefined && request.logprobs !== true
      ? { path: ["top_logprobs"], message: "top_logprobs is only allowed when logprobs is true." }
      : undefined
  )
).annotations({ identifier: "ChatCompletionRequest" })
export type ChatCompletionRequest = typeof ChatCompletionRequest.Type

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

export const FinishReason = Schema.Literal("stop", "length", "tool_calls", "content_filter", "function_call")
export type FinishReason = typeof FinishReason.Type

export const TopLogprob = Schema.Struct({
  token: Schema.String,
  logprob: Schema.Number,
  bytes: Schema.NullOr(Schema.Array(Schema.Number))
})

export const TokenLogprob = Schema.Struct({
  token: Schema.String,
  logprob: Schema.Number,
  bytes: Schema.NullOr(Schema.Array(Schema.Number)),
  top_logprobs: Schema.Array(TopLogprob)
})

export const ChoiceLogprobs = Schema.Struct({
  content: Schema.NullOr(Schema.Array(TokenLogprob)),
  refusal: Schema.NullOr(Schema.Array(TokenLogprob))
})

export const ResponseToolCall = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("function"),
  function: Schema.Struct({
    name: Schema.String,
    /** JSON text of the arguments (a string, not an object). */
    arguments: Schema.String
  })
})

export const ChatCompletionMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.NullOr(Schema.String),
  refusal: Schema.NullOr(Schema.String),
  tool_calls: Schema.optionalWith(Schema.Array(ResponseToolCall), { exact: true }),
  function_call: Schema.optionalWith(
    Schema.NullOr(Schema.Struct({ name: Schema.String, arguments: Schema.String })),
    { exact: true }
  ),
  annotations: Schema.optionalWith(Schema.Array(Schema.Unknown), { exact: true }),
  audio: Schema.optionalWith(Schema.Unknown, { exact: true })
})

export const CompletionUsage = Schema.Struct({
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  total_tokens: Schema.Int,
  prompt_tokens_details: Schema.optionalWith(
    Schema.Struct({
      cached_tokens: Schema.optionalWith(Schema.Int, { exact: true }),
      audio_tokens: Schema.optionalWith(Schema.Int, { exact: true })
    }),
    { exact: true }
  ),
  completion_tokens_details: Schema.optionalWith(
    Schema.Struct({
      reasoning_tokens: Schema.optionalWith(Schema.Int, { exact: true }),
      audio_tokens: Schema.optionalWith(Schema.Int, { exact: true }),
      accepted_prediction_tokens: Schema.optionalWith(Schema.Int, { exact: true }),
      rejected_prediction_tokens: Schema.optionalWith(Schema.Int, { exact: true })
    }),
    { exact: true }
  )
})
export type CompletionUsage = typeof CompletionUsage.Type

export const ChatCompletionChoice = Schema.Struct({
  index: Schema.Int,
  message: ChatCompletionMessage,
  finish_reason: FinishReason,
  logprobs: Schema.NullOr(ChoiceLogprobs)
})

export const ChatCompletion = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion"),
  created: Schema.Int,
  model: Schema.String,
  choices: Schema.Array(ChatCompletionChoice),
  usage: Schema.optionalWith(CompletionUsage, { exact: true }),
  system_fingerprint: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  service_tier: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true })
}).annotations({ identifier: "ChatCompletion" })
export type ChatCompletion = typeof ChatCompletion.Type

/** A fragment of a tool call inside a stream chunk; only `index` is always present. */
export const ChunkToolCall = Schema.Struct({
  index: Schema.Int,
  id: Schema.optionalWith(Schema.String, { exact: true }),
  type: Schema.optionalWith(Schema.Literal("function"), { exact: true }),
  function: Schema.optionalWith(
    Schema.Struct({
      name: Schema.optionalWith(Schema.String, { exact: true }),
      arguments: Schema.optionalWith(Schema.String, { exact: true })
    }),
    { exact: true }
  )
})

export const ChunkDelta = Schema.Struct({
  role: Schema.optionalWith(Schema.Literal("assistant"), { exact: true }),
  content: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  refusal: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  tool_calls: Schema.optionalWith(Schema.Array(ChunkToolCall), { exact: true }),
  function_call: Schema.optionalWith(
    Schema.Struct({
      name: Schema.optionalWith(Schema.String, { exact: true }),
      arguments: Schema.optionalWith(Schema.String, { exact: true })
    }),
    { exact: true }
  )
})

export const ChatCompletionChunkChoice = Schema.Struct({
  index: Schema.Int,
  delta: ChunkDelta,
  finish_reason: Schema.NullOr(FinishReason),
  logprobs: Schema.optionalWith(Schema.NullOr(ChoiceLogprobs), { exact: true })
})

/**
 * One `data:` event of a stream. When usage is asked for, every chunk carries `usage: null` and one
 * extra chunk with `choices: []` and the usage comes right before `data: [DONE]`.
 */
export const ChatCompletionChunk = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion.chunk"),
  created: Schema.Int,
  model: Schema.String,
  choices: Schema.Array(ChatCompletionChunkChoice),
  usage: Schema.optionalWith(Schema.NullOr(CompletionUsage), { exact: true }),
  system_fingerprint: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  service_tier: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true })
}).annotations({ identifier: "ChatCompletionChunk" })
export type ChatCompletionChunk = typeof ChatCompletionChunk.Type

// ---------------------------------------------------------------------------------------------
// Error body (shared by chat completions and embeddings)
// ---------------------------------------------------------------------------------------------

/** `{ error: { message, type, param, code } }`: the client library reads all four. */
export const ProviderAErrorBody = Schema.Struct({
  error: Schema.Struct({
    message: Schema.String,
    type: Schema.String,
    param: Schema.NullOr(Schema.String),
    code: Schema.NullOr(Schema.String)
  })
}).annotations({ identifier: "ProviderAErrorBody" })
export type ProviderAErrorBody = typeof ProviderAErrorBody.Type
