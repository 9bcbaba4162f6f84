// provider_a's Responses API: validation, the simulated model's output (reasoning, text, JSON, a function or custom
// tool call), and the answer as a response object or as the typed event stream from response.created to
// response.completed (or response.incomplete when max_output_tokens cut it).
import { Clock, Effect, Either, Schema } from "effect"
import { namedEvent } from "../../domain/sse"
import { chatCompletionModels } from "../catalog"
import { hexDigest, type Random, randomFor } from "../deterministic"
import type { Dialect } from "../dialect"
import { type AnswerContext, eventsReply, jsonReply, type SimulatedEndpoint } from "../endpoint"
import { randomId } from "../ids"
import { sampleJsonSchema } from "../jsonSchemaSample"
import { arrayAtLeast, arrayAtMost, integerBetween, numberBetween } from "../rangeChecks"
import { decodeRequest, rejectUnknownFields } from "../requestBody"
import { bracketPath, SimulatorError } from "../simulatorError"
import { chunkPieces, generateProse, type ShapedOutput, shapeOutput } from "../textGenerator"
import { SimulatorTokenizer, type TokenCounter } from "../tokenizer"
import { reasoningModels } from "./chatCompletionsRequest"
import { providerADialect } from "./dialect"

const nullable = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

/** An input item; the simulated model reads messages' text and the calls' names, arguments and outputs. */
const Item = Schema.Struct({
  type: Schema.optional(Schema.String),
  role: Schema.optional(Schema.Literal("user", "assistant", "system", "developer")),
  content: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) })))),
  call_id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  arguments: Schema.optional(Schema.String),
  input: Schema.optional(Schema.String),
  output: Schema.optional(Schema.Unknown)
})
type Item = typeof Item.Type

const Tool = Schema.Struct({
  type: Schema.String,
  name: Schema.optional(Schema.String),
  parameters: nullable(Schema.Unknown)
})
type Tool = typeof Tool.Type

const Request = Schema.Struct({
  model: Schema.String,
  input: Schema.Union(Schema.String, arrayAtLeast(Item, 1)),
  instructions: nullable(Schema.String),
  max_output_tokens: nullable(integerBetween(16)),
  temperature: nullable(numberBetween(0, 2)),
  top_p: nullable(numberBetween(0, 1)),
  tools: Schema.optional(arrayAtMost(Tool, 128)),
  tool_choice: Schema.optional(Schema.Union(Schema.String, Schema.Struct({ type: Schema.String, name: Schema.optional(Schema.String) }))),
  text: nullable(Schema.Struct({
    format: Schema.optional(Schema.Struct({ type: Schema.Literal("text", "json_object", "json_schema"), name: Schema.optional(Schema.String), schema: Schema.optional(Schema.Unknown) })),
    verbosity: nullable(Schema.String)
  })),
  reasoning: nullable(Schema.Struct({ effort: nullable(Schema.String), summary: nullable(Schema.String) })),
  include: nullable(Schema.Array(Schema.String)),
  metadata: nullable(Schema.Record({ key: Schema.String, value: Schema.String })),
  stream: nullable(Schema.Boolean),
  store: nullable(Schema.Boolean),
  previous_response_id: nullable(Schema.String),
  parallel_tool_calls: nullable(Schema.Boolean)
})
type Request = typeof Request.Type

const knownFields: ReadonlySet<string> = new Set([
  ...Object.keys(Request.fields),
  "background",
  "conversation",
  "max_tool_calls",
  "prompt",
  "prompt_cache_key",
  "safety_identifier",
  "service_tier",
  "stream_options",
  "top_logprobs",
  "truncation",
  "user"
])

const invalid = (message: string, path?: ReadonlyArray<string | number>, code?: string) =>
  new SimulatorError({ kind: "invalid_request", message, path, code })

/** The in-band error of this stream format: an `error` event (type, code, message, param). */
const errorEvent = (error: SimulatorError) =>
  namedEvent("error", {
    type: "error",
    code: error.code ?? "server_error",
    message: error.message,
    param: error.path === undefined || error.path.length === 0 ? null : bracketPath(error.path),
    sequence_number: 0
  })

/** The in-band error and the broken event of the Responses stream, on top of a dialect's HTTP conventions. */
export const responsesDialectOf = (dialect: Dialect): Dialect => ({
  ...dialect,
  streamError: errorEvent,
  malformedEvent: 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":\n\n'
})

const itemText = (item: Item): string =>
  typeof item.content === "string"
    ? item.content
    : item.content !== undefined
    ? item.content.map((part) => part.text ?? "").join("\n")
    : [item.name, item.arguments, item.input, typeof item.output === "string" ? item.output : JSON.stringify(item.output ?? "")]
      .filter((text) => text !== undefined).join(" ")

const itemsOf = (request: Request): ReadonlyArray<Item> =>
  typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input

/** Input tokens as the provider bills them: instructions, each item's text with a few framing tokens, the tools. */
const inputTokens = (request: Request, counter: TokenCounter): number => {
  let total = 3 + (request.instructions === undefined || request.instructions === null ? 0 : 3 + counter.count(request.instructions))
  for (const item of itemsOf(request)) total += 3 + counter.count(itemText(item))
  if (request.tools !== undefined && request.tools.length > 0) total += counter.count(JSON.stringify(request.tools))
  return total
}

/**
 * Prompts of 1,024 tokens and more are cached by prefix in steps of 128: the simulator answers as if the prefix had
 * been seen before (nothing is kept), so cached_tokens shows on long prompts.
 */
const cachedTokens = (input: number): number => (input < 1024 ? 0 : 1024 + Math.floor((input - 1024) / 128) * 128)

/** What the simulated model produces. */
type Produced =
  | { readonly _tag: "Text"; readonly output: ShapedOutput }
  | { readonly _tag: "FunctionCall"; readonly name: string; readonly arguments: string; readonly tokens: number }
  | { readonly _tag: "CustomCall"; readonly name: string; readonly input: string; readonly tokens: number }

const emptyParameters = { type: "object", properties: {} }

/** The tool the model calls: a named one, any with "required", and with "auto" when the last item is the user's. */
const toolToCall = (request: Request, random: Random): Tool | undefined => {
  const tools = (request.tools ?? []).filter((tool) => tool.type === "function" || tool.type === "custom")
  const choice = request.tool_choice ?? "auto"
  const [first, ...others] = tools
  if (first === undefined || choice === "none") return undefined
  if (typeof choice === "object") return tools.find((tool) => tool.name === choice.name) ?? first
  const items = itemsOf(request)
  const last = items[items.length - 1]
  return choice === "required" || last?.role === "user" ? random.pick([first, ...others]) : undefined
}

const lastUserText = (request: Request): string => {
  const last = [...itemsOf(request)].reverse().find((item) => item.role === "user")
  return last === undefined ? "" : itemText(last)
}

const produce = (request: Request, context: AnswerContext, counter: TokenCounter, random: Random): Produced => {
  const tool = toolToCall(request, random)
  if (tool !== undefined && tool.type === "function") {
    const args = JSON.stringify(sampleJsonSchema(tool.parameters ?? emptyParameters, random))
    return { _tag: "FunctionCall", name: tool.name ?? "", arguments: args, tokens: counter.count(args) + 3 }
  }
  if (tool !== undefined) {
    const input = generateProse(random, random.int(4, 16))
    return { _tag: "CustomCall", name: tool.name ?? "", input, tokens: counter.count(input) + 3 }
  }
  const length = context.controls.outputTokens ?? random.int(16, 96)
  const format = request.text?.format
  const text = context.controls.reply === "echo"
    ? lastUserText(request)
    : format?.type === "json_schema"
    ? JSON.stringify(sampleJsonSchema(format.schema ?? emptyParameters, random))
    : format?.type === "json_object"
    ? JSON.stringify({ answer: generateProse(random, length) })
    : generateProse(random, length)
  return { _tag: "Text", output: shapeOutput(text, counter, { maxTokens: request.max_output_tokens ?? undefined }) }
}

const producedTokens = (produced: Produced): number => (produced._tag === "Text" ? produced.output.tokens : produced.tokens)

interface Ids {
  readonly response: string
  readonly reasoning: string
  readonly item: string
  readonly call: string
}

/** The output items, complete, in order: reasoning first for reasoning models, then the message or the call. */
const outputItems = (request: Request, produced: Produced, ids: Ids, reasoning: boolean, incomplete: boolean) => {
  const encrypted = request.include?.includes("reasoning.encrypted_content") === true
  const items: Array<Record<string, unknown>> = reasoning
    ? [{
      type: "reasoning",
      id: ids.reasoning,
      summary: [],
      ...(encrypted ? { encrypted_content: `gAAAA${hexDigest([ids.reasoning], 48)}` } : {})
    }]
    : []
  switch (produced._tag) {
    case "Text":
      items.push({
        type: "message",
        id: ids.item,
        status: incomplete ? "incomplete" : "completed",
        role: "assistant",
        content: [{ type: "output_text", text: produced.output.text, annotations: [], logprobs: [] }]
      })
      break
    case "FunctionCall":
      items.push({ type: "function_call", id: ids.item, call_id: ids.call, name: produced.name, arguments: produced.arguments, status: "completed" })
      break
    case "CustomCall":
      items.push({ type: "custom_tool_call", id: ids.item, call_id: ids.call, name: produced.name, input: produced.input })
      break
  }
  return items
}

/** Tool arguments arrive in small fragments, as a model emits them. */
const fragments = (text: string): Array<string> => text.match(/[\s\S]{1,12}/g) ?? [text]

/** The event stream of a response: lifecycle events around each item's added, delta and done events. */
const streamEvents = (
  response: Record<string, unknown>,
  items: ReadonlyArray<Record<string, unknown>>,
  produced: Produced,
  chunkTokens: number
): Array<string> => {
  let sequence = 0
  const events: Array<string> = []
  const emit = (type: string, payload: Record<string, unknown>) => events.push(namedEvent(type, { type, sequence_number: sequence++, ...payload }))
  const started = { ...response, status: "in_progress", output: [], usage: null, incomplete_details: null }
  emit("response.created", { response: started })
  emit("response.in_progress", { response: started })
  items.forEach((item, index) => {
    const at = { item_id: item.id, output_index: index }
    switch (item.type) {
      case "message": {
        emit("response.output_item.added", { output_index: index, item: { ...item, status: "in_progress", content: [] } })
        const part = { type: "output_text", text: "", annotations: [], logprobs: [] }
        emit("response.content_part.added", { ...at, content_index: 0, part })
        const text = produced._tag === "Text" ? produced.output : undefined
        for (const piece of chunkPieces(text?.pieces ?? [], chunkTokens)) {
          emit("response.output_text.delta", { ...at, content_index: 0, delta: piece.text, logprobs: [] })
        }
        emit("response.output_text.done", { ...at, content_index: 0, text: text?.text ?? "", logprobs: [] })
        emit("response.content_part.done", { ...at, content_index: 0, part: { ...part, text: text?.text ?? "" } })
        break
      }
      case "function_call": {
        emit("response.output_item.added", { output_index: index, item: { ...item, arguments: "", status: "in_progress" } })
        for (const fragment of fragments(String(item.arguments))) emit("response.function_call_arguments.delta", { ...at, delta: fragment })
        emit("response.function_call_arguments.done", { ...at, name: item.name, arguments: item.arguments })
        break
      }
      case "custom_tool_call": {
        emit("response.output_item.added", { output_index: index, item: { ...item, input: "" } })
        for (const fragment of fragments(String(item.input))) emit("response.custom_tool_call_input.delta", { ...at, delta: fragment })
        emit("response.custom_tool_call_input.done", { ...at, input: item.input })
        break
      }
      default:
        emit("response.output_item.added", { output_index: index, item })
    }
    emit("response.output_item.done", { output_index: index, item })
  })
  emit(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response })
  return events
}

/** The checks the provider makes beyond each field's shape. */
const checkConsistency = (request: Request): Either.Either<void, SimulatorError> => {
  if (request.previous_response_id !== undefined && request.previous_response_id !== null) {
    // Nothing is ever stored here: no earlier response can be found.
    return Either.left(new SimulatorError({
      kind: "not_found",
      message: `Previous response with id '${request.previous_response_id}' not found.`,
      path: ["previous_response_id"],
      code: "previous_response_not_found"
    }))
  }
  const format = request.text?.format
  if (format?.type === "json_schema" && (format.name === undefined || format.schema === undefined)) {
    return Either.left(invalid("Missing required parameter: 'text.format.schema'.", ["text", "format", "schema"], "missing_required_parameter"))
  }
  if (format?.type === "json_object" && !/json/i.test([request.instructions ?? "", ...itemsOf(request).map(itemText)].join("\n"))) {
    return Either.left(invalid("Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'.", ["input"]))
  }
  const choice = request.tool_choice
  if (typeof choice === "object" && (choice.type === "function" || choice.type === "custom") &&
    !(request.tools ?? []).some((tool) => tool.name === choice.name)) {
    return Either.left(invalid(`Tool choice '${choice.name}' not found in 'tools' parameter.`, ["tool_choice"]))
  }
  return Either.void
}

export const responsesEndpointOf = (dialect: Dialect): SimulatedEndpoint<SimulatorTokenizer> => ({
  dialect: responsesDialectOf(dialect),
  answer: (body, context) =>
    Effect.gen(function*() {
      const counter = yield* SimulatorTokenizer
      yield* rejectUnknownFields(body, knownFields, (field) => `Unknown parameter: '${field}'.`)
      const request = yield* decodeRequest(Request, body)
      const model = chatCompletionModels.get(request.model)
      if (model === undefined) {
        return yield* new SimulatorError({
          kind: "invalid_request",
          message: `The requested model '${request.model}' does not exist.`,
          path: ["model"],
          code: "model_not_found"
        })
      }
      yield* checkConsistency(request)
      const maxTokens = request.max_output_tokens ?? undefined
      if (maxTokens !== undefined && maxTokens > model.maxOutputTokens) {
        return yield* invalid(
          `max_output_tokens is too large: ${maxTokens}. This model supports at most ${model.maxOutputTokens} output tokens.`,
          ["max_output_tokens"]
        )
      }
      const input = inputTokens(request, counter)
      if (input > model.contextWindow) {
        return yield* invalid(
          `Your input exceeds the context window of this model (${model.contextWindow} tokens, got ${input}). Please adjust your input and try again.`,
          ["input"],
          "context_length_exceeded"
        )
      }
      // Streaming or not, the same request gets the same answer.
      const { stream: _stream, ...significant } = body
      const canonical = JSON.stringify(significant)
      const random = randomFor(canonical, "response")
      const produced = produce(request, context, counter, random)
      const reasoning = reasoningModels.has(request.model)
      const reasoningTokens = reasoning ? random.int(16, 128) : 0
      const incomplete = produced._tag === "Text" && produced.output.stoppedBy === "max_tokens"
      const ids: Ids = {
        response: yield* randomId("resp_", 48, "hex"),
        reasoning: yield* randomId("rs_", 48, "hex"),
        item: yield* randomId(produced._tag === "Text" ? "msg_" : "fc_", 48, "hex"),
        call: yield* randomId("call_", 24)
      }
      const items = outputItems(request, produced, ids, reasoning, incomplete)
      const output = producedTokens(produced) + reasoningTokens
      const response = {
        id: ids.response,
        object: "response",
        created_at: Math.floor((yield* Clock.currentTimeMillis) / 1000),
        status: incomplete ? "incomplete" : "completed",
        background: false,
        error: null,
        incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
        instructions: request.instructions ?? null,
        max_output_tokens: request.max_output_tokens ?? null,
        max_tool_calls: null,
        model: request.model,
        output: items,
        parallel_tool_calls: request.parallel_tool_calls ?? true,
        previous_response_id: null,
        reasoning: { effort: request.reasoning?.effort ?? (reasoning ? "medium" : null), summary: request.reasoning?.summary ?? null },
        service_tier: "default",
        store: request.store ?? true,
        temperature: request.temperature ?? 1,
        text: { format: request.text?.format ?? { type: "text" }, verbosity: request.text?.verbosity ?? "medium" },
        tool_choice: request.tool_choice ?? "auto",
        tools: request.tools ?? [],
        top_logprobs: 0,
        top_p: request.top_p ?? 1,
        truncation: "disabled",
        usage: {
          input_tokens: input,
          input_tokens_details: { cached_tokens: cachedTokens(input) },
          output_tokens: output,
          output_tokens_details: { reasoning_tokens: reasoningTokens },
          total_tokens: input + output
        },
        user: null,
        metadata: request.metadata ?? {}
      }
      return request.stream === true
        ? eventsReply(streamEvents(response, items, produced, context.controls.chunkTokens))
        : jsonReply(response)
    })
})

/** The Responses API on provider_a's own API root. */
export const responsesEndpoint = responsesEndpointOf(providerADialect)
