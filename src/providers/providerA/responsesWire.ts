/**
 * provider_a's Responses API, stateless: the request as the `openai` client library's `responses.create`,
 * `.stream` and `.parse` send it, the response object and the stream's events. Checked as strictly as chat
 * completions (the same field builders); what needs state kept upstream (`store: true`,
 * `previous_response_id`, `conversation`, `background: true`, items referenced by id) and the provider's
 * hosted tools are refused, naming the field.
 *
 * Unknown request fields are dropped when decoding, as chat completions' are.
 */
import { Schema } from "effect"
import {
  boolean,
  describeValue,
  integerAtLeast,
  integerBetween,
  jsonObject,
  nonEmptyString,
  numberBetween,
  oneOf,
  optionalParam,
  string
} from "../../domain/fieldSchemas"
import { MAX_TOOLS } from "./chatCompletionsWire"

// ---------------------------------------------------------------------------------------------
// Refused fields: the endpoint keeps no state
// ---------------------------------------------------------------------------------------------

const sendHistory = "This endpoint is stateless: keep the conversation yourself and send it whole as `input` " +
  "(reasoning carries over with include: [\"reasoning.encrypted_content\"])."

/** A field that may only be absent (or null): any value is refused with `why`. */
const refused = (why: string) => Schema.Never.annotations({ message: () => ({ message: why, override: true }) })

/** A flag that may only be false (or absent). */
const onlyFalse = (why: string) => Schema.Literal(false).annotations({ message: () => ({ message: why, override: true }) })

// ---------------------------------------------------------------------------------------------
// Request: input items
// ---------------------------------------------------------------------------------------------

export const InputText = Schema.Struct({
  type: Schema.Literal("input_text"),
  text: string("An input_text part's text")
})

export const InputImage = Schema.Struct({
  type: Schema.Literal("input_image"),
  image_url: optionalParam(string("input_image.image_url")),
  file_id: optionalParam(string("input_image.file_id")),
  detail: optionalParam(oneOf("input_image.detail", "auto", "low", "high"))
})

export const InputFile = Schema.Struct({
  type: Schema.Literal("input_file"),
  file_data: optionalParam(string("input_file.file_data")),
  file_id: optionalParam(string("input_file.file_id")),
  file_url: optionalParam(string("input_file.file_url")),
  filename: optionalParam(string("input_file.filename"))
})

/** The model's earlier text, sent back as history. */
export const OutputText = Schema.Struct({
  type: Schema.Literal("output_text"),
  text: string("An output_text part's text"),
  annotations: optionalParam(Schema.Array(Schema.Unknown)),
  logprobs: optionalParam(Schema.Array(Schema.Unknown))
})

export const RefusalPart = Schema.Struct({
  type: Schema.Literal("refusal"),
  refusal: string("A refusal part's refusal")
})

const contentParts = Schema.Array(Schema.Union(InputText, InputImage, InputFile, OutputText, RefusalPart)).annotations({
  title: "an array of content parts"
})

/** A message: `type` may be left out (what the library calls an easy input message). */
export const InputMessage = Schema.Struct({
  type: optionalParam(Schema.Literal("message")),
  role: oneOf("input[].role", "user", "assistant", "system", "developer"),
  content: Schema.Union(Schema.String, contentParts).annotations({
    message: (issue) => ({ message: `input[].content must be a string or an array of content parts, got ${describeValue(issue.actual)}.`, override: true })
  }),
  id: optionalParam(string("input[].id")),
  status: optionalParam(string("input[].status"))
})

export const FunctionCallItem = Schema.Struct({
  type: Schema.Literal("function_call"),
  call_id: string("function_call.call_id"),
  name: string("function_call.name"),
  arguments: string("function_call.arguments"),
  id: optionalParam(string("function_call.id")),
  status: optionalParam(string("function_call.status"))
})

export const FunctionCallOutputItem = Schema.Struct({
  type: Schema.Literal("function_call_output"),
  call_id: string("function_call_output.call_id"),
  output: Schema.Union(Schema.String, Schema.Array(Schema.Union(InputText, InputImage, InputFile))).annotations({
    message: (issue) => ({ message: `function_call_output.output must be a string or an array of content parts, got ${describeValue(issue.actual)}.`, override: true })
  }),
  id: optionalParam(string("function_call_output.id")),
  status: optionalParam(string("function_call_output.status"))
})

export const CustomToolCallItem = Schema.Struct({
  type: Schema.Literal("custom_tool_call"),
  call_id: string("custom_tool_call.call_id"),
  name: string("custom_tool_call.name"),
  input: string("custom_tool_call.input"),
  id: optionalParam(string("custom_tool_call.id"))
})

export const CustomToolCallOutputItem = Schema.Struct({
  type: Schema.Literal("custom_tool_call_output"),
  call_id: string("custom_tool_call_output.call_id"),
  output: Schema.Union(Schema.String, Schema.Array(Schema.Union(InputText, InputImage, InputFile))),
  id: optionalParam(string("custom_tool_call_output.id"))
})

/** Reasoning carried over: its encrypted content is what the model reads again (nothing is kept upstream). */
export const ReasoningItem = Schema.Struct({
  type: Schema.Literal("reasoning"),
  id: optionalParam(string("reasoning.id")),
  summary: Schema.Array(Schema.Struct({ type: Schema.Literal("summary_text"), text: string("reasoning.summary[].text") })),
  encrypted_content: optionalParam(string("reasoning.encrypted_content")),
  content: optionalParam(Schema.Array(Schema.Unknown)),
  status: optionalParam(string("reasoning.status"))
})

/** An item stored upstream, named by id: nothing is stored, so there is nothing to name. */
export const ItemReference = Schema.Struct({
  type: Schema.Literal("item_reference"),
  id: refused(`input[]: item_reference names an item stored upstream. ${sendHistory}`)
})

/** Items of the provider's hosted tools sent back as history: those tools are not served here. */
const hostedItemTypes = [
  "file_search_call",
  "computer_call",
  "computer_call_output",
  "web_search_call",
  "image_generation_call",
  "code_interpreter_call",
  "local_shell_call",
  "local_shell_call_output",
  "mcp_list_tools",
  "mcp_approval_request",
  "mcp_approval_response",
  "mcp_call"
] as const

export const HostedToolItem = Schema.Struct({
  type: Schema.Literal(...hostedItemTypes).pipe(Schema.filter((type) => ({
    path: [],
    message: `input[]: items of type '${type}' belong to hosted tools, which this endpoint does not serve.`
  })))
})

export const InputItem = Schema.Union(
  InputMessage,
  FunctionCallItem,
  FunctionCallOutputItem,
  CustomToolCallItem,
  CustomToolCallOutputItem,
  ReasoningItem,
  ItemReference,
  HostedToolItem
).annotations({ title: "an input item" })
export type InputItem = typeof InputItem.Type

// ---------------------------------------------------------------------------------------------
// Request: tools, tool choice, text format, reasoning
// ---------------------------------------------------------------------------------------------

const NAME = /^[a-zA-Z0-9_-]{1,64}$/

const nameOf = (field: string) =>
  string(field).pipe(Schema.pattern(NAME, {
    message: (issue) => `${field} must be 1 to 64 letters, digits, underscores or dashes (^[a-zA-Z0-9_-]{1,64}$), got ${describeValue(issue.actual)}.`
  }))

/** A function tool, flat as this API writes it (chat completions nest it under `function`). */
export const FunctionTool = Schema.Struct({
  type: Schema.Literal("function"),
  name: nameOf("tools[].name"),
  description: optionalParam(string("tools[].description")),
  parameters: optionalParam(jsonObject("tools[].parameters (a JSON Schema)")),
  strict: optionalParam(boolean("tools[].strict"))
})

/** A custom tool: free-form text input, optionally held to a grammar. */
export const CustomTool = Schema.Struct({
  type: Schema.Literal("custom"),
  name: nameOf("tools[].name"),
  description: optionalParam(string("tools[].description")),
  format: optionalParam(Schema.Union(
    Schema.Struct({ type: Schema.Literal("text") }),
    Schema.Struct({
      type: Schema.Literal("grammar"),
      syntax: oneOf("tools[].format.syntax", "lark", "regex"),
      definition: string("tools[].format.definition")
    })
  ))
})

/** The provider's own tools, run on its side (and some of them keeping state there): not served here. */
export const hostedToolTypes = [
  "web_search",
  "web_search_preview",
  "web_search_preview_2025_03_11",
  "web_search_2025_08_26",
  "file_search",
  "code_interpreter",
  "computer_use",
  "computer_use_preview",
  "image_generation",
  "mcp",
  "local_shell",
  "shell",
  "apply_patch"
] as const

export const HostedTool = Schema.Struct({
  type: Schema.Literal(...hostedToolTypes).pipe(Schema.filter((type) => ({
    path: [],
    message: `tools[]: the hosted tool '${type}' is not served here; declare a function or custom tool and run it yourself.`
  })))
})

export const Tool = Schema.Union(FunctionTool, CustomTool, HostedTool).annotations({ title: "a function or custom tool" })
export type Tool = typeof Tool.Type

export const ToolChoice = Schema.Union(
  oneOf("tool_choice", "none", "auto", "required"),
  Schema.Struct({ type: Schema.Literal("function"), name: string("tool_choice.name") }),
  Schema.Struct({ type: Schema.Literal("custom"), name: string("tool_choice.name") }),
  Schema.Struct({
    type: Schema.Literal("allowed_tools"),
    mode: oneOf("tool_choice.mode", "auto", "required"),
    tools: Schema.Array(jsonObject("tool_choice.tools[]"))
  })
).annotations({
  message: (issue) => ({
    message: `tool_choice must be 'none', 'auto', 'required' or a function, custom or allowed_tools choice, got ${describeValue(issue.actual)}.`,
    override: true
  })
})

/** `{ type: "json_schema", name, schema, … }`: structured outputs, flat (chat completions nest it under `json_schema`). */
export const JsonSchemaFormat = Schema.Struct({
  type: Schema.Literal("json_schema"),
  name: nameOf("text.format.name"),
  description: optionalParam(string("text.format.description")),
  schema: jsonObject("text.format.schema (a JSON Schema)"),
  strict: optionalParam(boolean("text.format.strict"))
})

export const TextFormat = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({ type: Schema.Literal("json_object") }),
  JsonSchemaFormat
).annotations({ title: "a text format" })

export const TextOptions = Schema.Struct({
  format: optionalParam(TextFormat),
  verbosity: optionalParam(oneOf("text.verbosity", "low", "medium", "high"))
})

export const ReasoningOptions = Schema.Struct({
  effort: optionalParam(oneOf("reasoning.effort", "none", "minimal", "low", "medium", "high", "xhigh")),
  summary: optionalParam(oneOf("reasoning.summary", "auto", "concise", "detailed"))
})

/** At most 16 pairs; keys up to 64 characters, values up to 512, as the provider takes them. */
export const Metadata = Schema.Record({ key: Schema.String, value: string("metadata values") })
  .annotations({ message: (issue) => `metadata must be an object of strings, got ${describeValue(issue.actual)}.` })
  .pipe(Schema.filter((metadata) => {
    const entries = Object.entries(metadata)
    if (entries.length > 16) return { path: [], message: `metadata must have at most 16 pairs, got ${entries.length}.` }
    const long = entries.find(([key, value]) => key.length > 64 || value.length > 512)
    return long === undefined
      ? undefined
      : { path: [long[0]], message: "metadata keys must be at most 64 characters and values at most 512." }
  }))

export const includable = ["reasoning.encrypted_content", "message.output_text.logprobs"] as const

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

/** Parameters accepted whatever they hold and never forwarded (the upstream's defaults apply). */
const dropped = Schema.optionalWith(Schema.Unknown, { exact: true })

export const ResponsesRequest = Schema.Struct({
  model: nonEmptyString("model"),
  input: Schema.Union(
    Schema.String,
    Schema.Array(InputItem).pipe(Schema.minItems(1, { message: () => "input must contain at least one item." }))
  ).annotations({
    message: (issue) => ({ message: `input must be a string or an array of input items, got ${describeValue(issue.actual)}.`, override: false })
  }),
  instructions: optionalParam(string("instructions")),
  max_output_tokens: optionalParam(integerAtLeast("max_output_tokens", 16)),
  max_tool_calls: optionalParam(integerAtLeast("max_tool_calls", 1)),
  temperature: optionalParam(numberBetween("temperature", 0, 2)),
  top_p: optionalParam(numberBetween("top_p", 0, 1)),
  top_logprobs: optionalParam(integerBetween("top_logprobs", 0, 20)),
  tools: optionalParam(
    Schema.Array(Tool).pipe(Schema.maxItems(MAX_TOOLS, { message: () => `tools must contain at most ${MAX_TOOLS} tools.` }))
  ),
  tool_choice: optionalParam(ToolChoice),
  parallel_tool_calls: optionalParam(boolean("parallel_tool_calls")),
  text: optionalParam(TextOptions),
  reasoning: optionalParam(ReasoningOptions),
  metadata: optionalParam(Metadata),
  include: optionalParam(Schema.Array(oneOf("include[]", ...includable))),
  stream: optionalParam(boolean("stream")),
  stream_options: optionalParam(Schema.Struct({ include_obfuscation: optionalParam(boolean("stream_options.include_obfuscation")) })),
  truncation: optionalParam(oneOf("truncation", "auto", "disabled")),
  user: optionalParam(string("user")),
  safety_identifier: optionalParam(string("safety_identifier")),
  prompt_cache_key: optionalParam(string("prompt_cache_key")),
  store: optionalParam(onlyFalse(`store: true is not supported. ${sendHistory}`)),
  background: optionalParam(onlyFalse(`background: true is not supported: responses are not kept to be fetched later. Stream the response instead.`)),
  previous_response_id: optionalParam(refused(`previous_response_id is not supported: no response is stored here. ${sendHistory}`)),
  conversation: optionalParam(refused(`conversation is not supported: no conversation is stored here. ${sendHistory}`)),
  prompt: optionalParam(refused("prompt is not supported: prompt templates are stored upstream. Send the text as instructions and input.")),
  service_tier: dropped
}).annotations({ identifier: "ResponsesRequest" })
export type ResponsesRequest = typeof ResponsesRequest.Type

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

export const ResponseUsage = Schema.Struct({
  input_tokens: Schema.Int,
  input_tokens_details: Schema.Struct({ cached_tokens: Schema.Int }),
  output_tokens: Schema.Int,
  output_tokens_details: Schema.Struct({ reasoning_tokens: Schema.Int }),
  total_tokens: Schema.Int
})
export type ResponseUsage = typeof ResponseUsage.Type

/** An output item: a message, a function or custom tool call, reasoning (read by the client library). */
export const OutputItem = Schema.Struct({
  type: Schema.String,
  id: Schema.String
}).pipe(Schema.extend(Schema.Record({ key: Schema.String, value: Schema.Unknown })))

export const ResponseObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("response"),
  created_at: Schema.Number,
  status: Schema.Literal("completed", "incomplete", "failed", "in_progress", "queued", "cancelled"),
  model: Schema.String,
  output: Schema.Array(OutputItem),
  usage: Schema.optionalWith(Schema.NullOr(ResponseUsage), { exact: true }),
  error: Schema.NullOr(Schema.Struct({ code: Schema.String, message: Schema.String })),
  incomplete_details: Schema.NullOr(Schema.Struct({ reason: Schema.String })),
  instructions: Schema.optionalWith(Schema.Unknown, { exact: true }),
  max_output_tokens: Schema.optionalWith(Schema.NullOr(Schema.Int), { exact: true }),
  metadata: Schema.optionalWith(Schema.Unknown, { exact: true }),
  parallel_tool_calls: Schema.optionalWith(Schema.Boolean, { exact: true }),
  previous_response_id: Schema.optionalWith(Schema.Null, { exact: true }),
  store: Schema.optionalWith(Schema.Boolean, { exact: true }),
  temperature: Schema.optionalWith(Schema.NullOr(Schema.Number), { exact: true }),
  text: Schema.optionalWith(Schema.Unknown, { exact: true }),
  tool_choice: Schema.optionalWith(Schema.Unknown, { exact: true }),
  tools: Schema.optionalWith(Schema.Array(Schema.Unknown), { exact: true }),
  top_p: Schema.optionalWith(Schema.NullOr(Schema.Number), { exact: true })
}).annotations({ identifier: "Response" })
export type ResponseObject = typeof ResponseObject.Type

/** Events that end a stream: each carries the whole response, with its usage. */
export const terminalEvents: ReadonlySet<string> = new Set(["response.completed", "response.incomplete", "response.failed"])
