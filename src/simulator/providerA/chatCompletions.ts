// provider_a chat completions: validation, the simulated model's choice (text, JSON or tool call), and the
// answer as a chat.completion object or as chat.completion.chunk events.
import { Clock, Effect, Either } from "effect"
import { chatCompletionModels } from "../catalog"
import { base62Digest, type Random, randomFor } from "../deterministic"
import { type AnswerContext, eventsReply, jsonReply, type Reply, type SimulatedEndpoint } from "../endpoint"
import { randomId } from "../ids"
import { sampleJsonSchema } from "../jsonSchemaSample"
import { decodeRequest, rejectUnknownFields } from "../requestBody"
import { SimulatorError } from "../simulatorError"
import { dataEvent, doneEvent } from "../../domain/sse"
import { chunkPieces, generateProse, type ShapedOutput, shapeOutput, type TokenPiece } from "../textGenerator"
import { SimulatorTokenizer, type TokenCounter } from "../tokenizer"
import { type ChatCompletionRequest, type ChatMessage, ChatCompletionRequest as RequestSchema, knownChatCompletionFields, reasoningModels } from "./chatCompletionsRequest"
import { providerADialect } from "./dialect"

type FinishReason = "stop" | "length" | "tool_calls" | "function_call"

type ChoiceOutput =
  | { readonly _tag: "Text"; readonly output: ShapedOutput; readonly finishReason: FinishReason }
  | { readonly _tag: "ToolCall"; readonly id: string; readonly name: string; readonly arguments: string; readonly tokens: number }
  | { readonly _tag: "FunctionCall"; readonly name: string; readonly arguments: string; readonly tokens: number }

const invalid = (message: string, path?: ReadonlyArray<string | number>, code?: string) =>
  new SimulatorError({ kind: "invalid_request", message, path, code })

export const messageText = (message: ChatMessage): string =>
  typeof message.content === "string"
    ? message.content
    : (message.content ?? []).map((part) => part.text ?? "").join("\n")

const imageParts = (message: ChatMessage): number =>
  Array.isArray(message.content) ? message.content.filter((part) => part.type === "image_url").length : 0

/** Prompt tokens the way provider_a bills them: content plus a few framing tokens per message. */
export const promptTokens = (request: ChatCompletionRequest, counter: TokenCounter): number => {
  let total = 3
  for (const message of request.messages) {
    total += 3 + counter.count(message.role) + counter.count(messageText(message)) + imageParts(message) * 85
    if (message.name !== undefined) total += 1 + counter.count(message.name)
    for (const call of message.tool_calls ?? []) total += counter.count(call.function.name + call.function.arguments) + 3
  }
  if (request.tools !== undefined && request.tools.length > 0) total += counter.count(JSON.stringify(request.tools))
  if (request.functions !== undefined && request.functions.length > 0) total += counter.count(JSON.stringify(request.functions))
  return total
}

/** The checks provider_a makes beyond the shape of each field. */
const checkConsistency = (request: ChatCompletionRequest): Either.Either<void, SimulatorError> => {
  for (const [index, message] of request.messages.entries()) {
    const needsContent = message.role !== "assistant" && message.role !== "function"
    if (needsContent && (message.content === null || message.content === undefined)) {
      return Either.left(invalid(`Invalid value for 'content': expected a string, got null.`, ["messages", index, "content"]))
    }
    if (message.role === "tool") {
      if (message.tool_call_id === undefined) {
        return Either.left(invalid("Missing required parameter: 'messages[" + index + "].tool_call_id'.", ["messages", index, "tool_call_id"], "missing_required_parameter"))
      }
      const answered = request.messages
        .slice(0, index)
        .reverse()
        .find((earlier) => earlier.role !== "tool")
      if (answered?.role !== "assistant" || !(answered.tool_calls ?? []).some((call) => call.id === message.tool_call_id)) {
        return Either.left(
          invalid(
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
            ["messages", index, "role"]
          )
        )
      }
    }
  }
  if (request.top_logprobs !== undefined && request.top_logprobs !== null && request.logprobs !== true) {
    return Either.left(invalid("Invalid value for 'top_logprobs': 'logprobs' must be set to true when 'top_logprobs' is set.", ["top_logprobs"]))
  }
  if (request.stream_options !== undefined && request.stream_options !== null && request.stream !== true) {
    return Either.left(invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", ["stream_options"]))
  }
  if (request.tool_choice !== undefined && (request.tools ?? []).length === 0) {
    return Either.left(invalid("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", ["tool_choice"]))
  }
  const chosen = request.tool_choice
  if (typeof chosen === "object" && !(request.tools ?? []).some((tool) => tool.function.name === chosen.function.name)) {
    return Either.left(invalid(`Invalid value for 'tool_choice': function '${chosen.function.name}' is not among the tools.`, ["tool_choice"]))
  }
  if (
    request.response_format?.type === "json_object" &&
    !request.messages.some((message) => /json/i.test(messageText(message)))
  ) {
    return Either.left(
      invalid("'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", ["messages"])
    )
  }
  return Either.void
}

const lastUserText = (request: ChatCompletionRequest): string => {
  const lastUser = [...request.messages].reverse().find((message) => message.role === "user")
  return lastUser === undefined ? "" : messageText(lastUser)
}

/** The tool (or legacy function) the simulated model calls, if any. */
const toolToCall = (
  request: ChatCompletionRequest,
  random: Random
): { readonly legacy: boolean; readonly name: string; readonly parameters: unknown } | undefined => {
  const lastRole = request.messages[request.messages.length - 1]?.role
  const [firstTool, ...otherTools] = request.tools ?? []
  const toolChoice = request.tool_choice ?? "auto"
  if (firstTool !== undefined && toolChoice !== "none") {
    if (typeof toolChoice === "object") {
      const named = [firstTool, ...otherTools].find((tool) => tool.function.name === toolChoice.function.name) ?? firstTool
      return { legacy: false, name: named.function.name, parameters: named.function.parameters }
    }
    // With "auto" the simulated model calls a tool when the user has just spoken, and answers after tool results.
    if (toolChoice === "required" || lastRole === "user") {
      const tool = random.pick([firstTool, ...otherTools])
      return { legacy: false, name: tool.function.name, parameters: tool.function.parameters }
    }
    return undefined
  }
  const [firstFunction, ...otherFunctions] = request.functions ?? []
  const functionChoice = request.function_call ?? "auto"
  if (firstFunction !== undefined && functionChoice !== "none") {
    if (typeof functionChoice === "object") {
      const named = [firstFunction, ...otherFunctions].find((fn) => fn.name === functionChoice.name) ?? firstFunction
      return { legacy: true, name: named.name, parameters: named.parameters }
    }
    if (lastRole === "user") {
      const fn = random.pick([firstFunction, ...otherFunctions])
      return { legacy: true, name: fn.name, parameters: fn.parameters }
    }
  }
  return undefined
}

const emptyParameters = { type: "object", properties: {} }

const choiceOutput = (
  request: ChatCompletionRequest,
  context: AnswerContext,
  counter: TokenCounter,
  canonical: string,
  index: number
): Effect.Effect<ChoiceOutput> =>
  Effect.gen(function* () {
    const random = randomFor(canonical, `choice-${index}`)
    const call = toolToCall(request, random)
    if (call !== undefined) {
      const args = JSON.stringify(sampleJsonSchema(call.parameters ?? emptyParameters, random))
      const tokens = counter.count(call.name) + counter.count(args) + 3
      return call.legacy
        ? { _tag: "FunctionCall", name: call.name, arguments: args, tokens }
        : { _tag: "ToolCall", id: yield* randomId("call_", 24), name: call.name, arguments: args, tokens }
    }
    const length = context.controls.outputTokens ?? random.int(16, 96)
    const format = request.response_format
    const text =
      context.controls.reply === "echo"
        ? lastUserText(request)
        : format?.type === "json_schema"
          ? JSON.stringify(sampleJsonSchema(format.json_schema.schema ?? emptyParameters, random))
          : format?.type === "json_object"
            ? JSON.stringify({ answer: generateProse(random, length) })
            : generateProse(random, length)
    const stop = request.stop === undefined || request.stop === null ? [] : typeof request.stop === "string" ? [request.stop] : request.stop
    const output = shapeOutput(text, counter, { maxTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined, stop })
    return { _tag: "Text", output, finishReason: output.stoppedBy === "max_tokens" ? "length" : "stop" }
  })

const completionTokens = (choice: ChoiceOutput): number => (choice._tag === "Text" ? choice.output.tokens : choice.tokens)

const finishReasonOf = (choice: ChoiceOutput): FinishReason =>
  choice._tag === "Text" ? choice.finishReason : choice._tag === "ToolCall" ? "tool_calls" : "function_call"

const tokenLogprobs = (pieces: ReadonlyArray<TokenPiece>, topCount: number, random: Random) =>
  pieces.map((piece) => {
    const logprob = -Math.round(random.next() * 2_000_000) / 1_000_000
    const bytes = [...Buffer.from(piece.text, "utf8")]
    const alternatives = Array.from({ length: Math.max(0, topCount - 1) }, (_, rank) => {
      const token = ` ${generateProse(random, 1).toLowerCase()}`
      return { token, logprob: logprob - 1 - rank - random.next(), bytes: [...Buffer.from(token, "utf8")] }
    })
    return {
      token: piece.text,
      logprob,
      bytes,
      top_logprobs: topCount === 0 ? [] : [{ token: piece.text, logprob, bytes }, ...alternatives]
    }
  })

const usageOf = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 }
})

const messageOf = (choice: ChoiceOutput) => {
  switch (choice._tag) {
    case "Text":
      return { role: "assistant", content: choice.output.text, refusal: null, annotations: [] }
    case "ToolCall":
      return {
        role: "assistant",
        content: null,
        refusal: null,
        annotations: [],
        tool_calls: [{ id: choice.id, type: "function", function: { name: choice.name, arguments: choice.arguments } }]
      }
    case "FunctionCall":
      return { role: "assistant", content: null, refusal: null, annotations: [], function_call: { name: choice.name, arguments: choice.arguments } }
  }
}

interface Rendering {
  readonly id: string
  readonly created: number
  readonly model: string
  readonly fingerprint: string
  readonly promptTokens: number
  readonly canonical: string
}

const renderJson = (request: ChatCompletionRequest, choices: ReadonlyArray<ChoiceOutput>, r: Rendering): Reply =>
  jsonReply({
    id: r.id,
    object: "chat.completion",
    created: r.created,
    model: r.model,
    choices: choices.map((choice, index) => ({
      index,
      message: messageOf(choice),
      logprobs:
        request.logprobs === true && choice._tag === "Text"
          ? { content: tokenLogprobs(choice.output.pieces, request.top_logprobs ?? 0, randomFor(r.canonical, `logprobs-${index}`)), refusal: null }
          : null,
      finish_reason: finishReasonOf(choice)
    })),
    usage: usageOf(r.promptTokens, choices.reduce((sum, choice) => sum + completionTokens(choice), 0)),
    service_tier: "default",
    system_fingerprint: r.fingerprint
  })

const renderStream = (
  request: ChatCompletionRequest,
  choices: ReadonlyArray<ChoiceOutput>,
  r: Rendering,
  chunkTokens: number
): Reply => {
  const includeUsage = request.stream_options?.include_usage === true
  const chunk = (choice: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}) =>
    dataEvent({
      id: r.id,
      object: "chat.completion.chunk",
      created: r.created,
      model: r.model,
      service_tier: "default",
      system_fingerprint: r.fingerprint,
      choices: choice === undefined ? [] : [choice],
      ...(includeUsage ? { usage: null } : {}),
      ...extra
    })
  const events: Array<string> = []
  choices.forEach((choice, index) => {
    const delta = (deltaBody: Record<string, unknown>, logprobs: unknown = null, finish: FinishReason | null = null) =>
      chunk({ index, delta: deltaBody, logprobs, finish_reason: finish })
    switch (choice._tag) {
      case "Text": {
        events.push(delta({ role: "assistant", content: "", refusal: null }))
        const random = randomFor(r.canonical, `logprobs-${index}`)
        for (const piece of chunkPieces(choice.output.pieces, chunkTokens)) {
          const logprobs =
            request.logprobs === true ? { content: tokenLogprobs([piece], request.top_logprobs ?? 0, random), refusal: null } : null
          events.push(delta({ content: piece.text }, logprobs))
        }
        break
      }
      case "ToolCall": {
        events.push(
          delta({
            role: "assistant",
            content: null,
            tool_calls: [{ index: 0, id: choice.id, type: "function", function: { name: choice.name, arguments: "" } }]
          })
        )
        for (const fragment of argumentFragments(choice.arguments)) {
          events.push(delta({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }))
        }
        break
      }
      case "FunctionCall": {
        events.push(delta({ role: "assistant", content: null, function_call: { name: choice.name, arguments: "" } }))
        for (const fragment of argumentFragments(choice.arguments)) {
          events.push(delta({ function_call: { arguments: fragment } }))
        }
        break
      }
    }
    events.push(delta({}, null, finishReasonOf(choice)))
  })
  if (includeUsage) {
    events.push(chunk(undefined, { usage: usageOf(r.promptTokens, choices.reduce((sum, choice) => sum + completionTokens(choice), 0)) }))
  }
  events.push(doneEvent)
  return eventsReply(events)
}

/** Tool arguments arrive in small string fragments, as a model emits them. */
const argumentFragments = (args: string): Array<string> => args.match(/[\s\S]{1,12}/g) ?? [args]

export const chatCompletionsEndpoint: SimulatedEndpoint<SimulatorTokenizer> = {
  dialect: providerADialect,
  answer: (body, context) =>
    Effect.gen(function* () {
      const counter = yield* SimulatorTokenizer
      yield* rejectUnknownFields(body, knownChatCompletionFields, (field) => `Unrecognized request argument supplied: ${field}`)
      const request = yield* decodeRequest(RequestSchema, body)
      const model = chatCompletionModels.get(request.model)
      if (model === undefined) {
        return yield* new SimulatorError({
          kind: "not_found",
          message: `The model \`${request.model}\` does not exist or you do not have access to it.`,
          code: "model_not_found"
        })
      }
      if (reasoningModels.has(request.model) && request.max_tokens !== undefined && request.max_tokens !== null) {
        return yield* invalid(
          "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
          ["max_tokens"],
          "unsupported_parameter"
        )
      }
      yield* checkConsistency(request)
      const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? undefined
      const maxTokensField = request.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens"
      if (maxTokens !== undefined && maxTokens > model.maxOutputTokens) {
        return yield* invalid(
          `max_tokens is too large: ${maxTokens}. This model supports at most ${model.maxOutputTokens} completion tokens, whereas you provided ${maxTokens}.`,
          [maxTokensField]
        )
      }
      const prompt = promptTokens(request, counter)
      if (prompt + (maxTokens ?? 0) > model.contextWindow) {
        return yield* invalid(
          `This model's maximum context length is ${model.contextWindow} tokens. However, your messages resulted in ${prompt} tokens${maxTokens === undefined ? "" : ` (${maxTokens} in the completion)`}. Please reduce the length of the messages.`,
          ["messages"],
          "context_length_exceeded"
        )
      }
      // Streaming or not, the same request gets the same answer.
      const { stream: _stream, stream_options: _options, ...significant } = body
      const canonical = JSON.stringify(significant)
      const choices = yield* Effect.forEach(Array.from({ length: request.n ?? 1 }, (_, index) => index), (index) =>
        choiceOutput(request, context, counter, canonical, index)
      )
      const rendering: Rendering = {
        id: yield* randomId("chatcmpl-", 29),
        created: Math.floor((yield* Clock.currentTimeMillis) / 1000),
        model: request.model,
        fingerprint: `fp_${base62Digest([request.model], 10).toLowerCase()}`,
        promptTokens: prompt,
        canonical
      }
      return request.stream === true
        ? renderStream(request, choices, rendering, context.controls.chunkTokens)
        : renderJson(request, choices, rendering)
    })
}
