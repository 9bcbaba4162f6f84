// provider_b messages: validation, the simulated model's turn (thinking, text, tool use), and the answer as a
// Message object or as the named stream events message_start … message_stop.
import { Effect, Either } from "effect"
import { messagesModels } from "../catalog"
import { base62Digest, type Random, randomFor } from "../deterministic"
import { type AnswerContext, eventsReply, jsonReply, type Reply, type SimulatedEndpoint } from "../endpoint"
import { randomId } from "../ids"
import { sampleJsonSchema } from "../jsonSchemaSample"
import { decodeRequest, rejectUnknownFields } from "../requestBody"
import { SimulatorError } from "../simulatorError"
import { namedEvent } from "../../domain/sse"
import { chunkPieces, generateProse, shapeOutput, type StopCause, type TokenPiece } from "../textGenerator"
import { SimulatorTokenizer, type TokenCounter } from "../tokenizer"
import { providerBDialect } from "./dialect"
import { type ContentBlock, type CountTokensRequest, type InputMessage, knownMessagesFields, MessagesRequest } from "./messagesRequest"

const invalid = (message: string, path?: ReadonlyArray<string | number>) =>
  new SimulatorError({ kind: "invalid_request", message, path })

const imageMediaTypes = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"])

const blockText = (block: ContentBlock): string => {
  if (block.text !== undefined) return block.text
  if (block.thinking !== undefined) return block.thinking
  if (block.input !== undefined) return JSON.stringify(block.input)
  if (typeof block.content === "string") return block.content
  return (block.content ?? []).map((part) => part.text ?? "").join("\n")
}

const blocksOf = (message: InputMessage): ReadonlyArray<ContentBlock> =>
  typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content

/** The checks provider_b makes on content blocks and the conversation (of a token count too, which has no max_tokens). */
export const checkConversation = (request: MessagesRequest | CountTokensRequest): Either.Either<void, SimulatorError> => {
  if (request.messages[0]?.role !== "user") {
    return Either.left(invalid('messages: first message must use the "user" role', ["messages"]))
  }
  for (const [index, message] of request.messages.entries()) {
    const previous = request.messages[index - 1]
    const offeredToolUses = new Set(
      previous?.role === "assistant" ? blocksOf(previous).flatMap((block) => (block.type === "tool_use" && block.id !== undefined ? [block.id] : [])) : []
    )
    for (const [blockIndex, block] of blocksOf(message).entries()) {
      const at = `messages.${index}.content.${blockIndex}`
      switch (block.type) {
        case "text":
          if (block.text === undefined) return Either.left(invalid(`${at}.text: Field required`))
          break
        case "image": {
          const source = block.source as { readonly type?: unknown; readonly media_type?: unknown; readonly data?: unknown } | undefined
          if (source?.type === "base64" && (typeof source.media_type !== "string" || !imageMediaTypes.has(source.media_type))) {
            return Either.left(
              invalid(`${at}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`)
            )
          }
          if (source === undefined) return Either.left(invalid(`${at}.source: Field required`))
          break
        }
        case "tool_use":
          if (block.id === undefined || block.name === undefined || block.input === undefined) {
            return Either.left(invalid(`${at}: tool_use blocks need id, name and input`))
          }
          break
        case "tool_result":
          if (block.tool_use_id === undefined) return Either.left(invalid(`${at}.tool_use_id: Field required`))
          if (!offeredToolUses.has(block.tool_use_id)) {
            return Either.left(
              invalid(
                `${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
              )
            )
          }
          break
      }
    }
  }
  const tools = request.tools ?? []
  for (const [index, tool] of tools.entries()) {
    if ((tool.type === undefined || tool.type === "custom") && tool.input_schema === undefined) {
      return Either.left(invalid(`tools.${index}.custom.input_schema: Field required`))
    }
  }
  const choice = request.tool_choice
  if (choice !== undefined && choice.type !== "none" && choice.type !== "auto" && tools.length === 0) {
    return Either.left(invalid("tool_choice: tool_choice may only be specified while providing tools."))
  }
  if (choice?.type === "tool" && !tools.some((tool) => tool.name === choice.name)) {
    return Either.left(invalid(`tool_choice: Tool '${choice.name ?? ""}' not found in provided tools`))
  }
  if ("max_tokens" in request && request.thinking?.type === "enabled" && request.thinking.budget_tokens >= request.max_tokens) {
    return Either.left(invalid("`max_tokens` must be greater than `thinking.budget_tokens`."))
  }
  return Either.void
}

/** Input tokens: system prompt, every block, tool definitions, and a few framing tokens per message. */
export const inputTokens = (request: Pick<MessagesRequest, "system" | "messages" | "tools">, counter: TokenCounter): number => {
  let total = 4
  const system = request.system
  if (system !== undefined) total += counter.count(typeof system === "string" ? system : system.map((block) => block.text).join("\n"))
  for (const message of request.messages) {
    total += 3
    for (const block of blocksOf(message)) total += block.type === "image" ? 1_600 : counter.count(blockText(block))
  }
  if (request.tools !== undefined && request.tools.length > 0) total += counter.count(JSON.stringify(request.tools)) + 300
  return total
}

type OutputBlock =
  | { readonly type: "thinking"; readonly pieces: ReadonlyArray<TokenPiece>; readonly text: string; readonly signature: string }
  | { readonly type: "text"; readonly pieces: ReadonlyArray<TokenPiece>; readonly text: string }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: unknown }

interface Turn {
  readonly blocks: ReadonlyArray<OutputBlock>
  readonly outputTokens: number
  readonly stopReason: "end_turn" | "max_tokens" | "stop_sequence" | "tool_use"
  readonly stopSequence: string | null
}

const lastUserText = (request: MessagesRequest): string => {
  const lastUser = [...request.messages].reverse().find((message) => message.role === "user")
  return lastUser === undefined ? "" : blocksOf(lastUser).filter((block) => block.type === "text").map(blockText).join("\n")
}

/** The tool the simulated model calls: when asked to, or ("auto") when the user has just spoken. */
const toolToCall = (request: MessagesRequest, random: Random) => {
  const [firstTool, ...otherTools] = (request.tools ?? []).filter((tool) => tool.input_schema !== undefined)
  const choice = request.tool_choice ?? { type: "auto" as const }
  if (firstTool === undefined || choice.type === "none") return undefined
  if (choice.type === "tool") return [firstTool, ...otherTools].find((tool) => tool.name === choice.name)
  const last = request.messages[request.messages.length - 1]
  const userJustSpoke = last !== undefined && last.role === "user" && !blocksOf(last).some((block) => block.type === "tool_result")
  return choice.type === "any" || userJustSpoke ? random.pick([firstTool, ...otherTools]) : undefined
}

const stopReasonOf = (cause: StopCause): Turn["stopReason"] =>
  cause === "max_tokens" ? "max_tokens" : cause === "stop_sequence" ? "stop_sequence" : "end_turn"

const takeTurn = (request: MessagesRequest, context: AnswerContext, counter: TokenCounter, canonical: string): Effect.Effect<Turn> =>
  Effect.gen(function* () {
    const random = randomFor(canonical, "turn")
    const blocks: Array<OutputBlock> = []
    // Thinking, text and tool input all count against max_tokens.
    let used = 0
    if (request.thinking?.type === "enabled") {
      const thinking = shapeOutput(generateProse(random, random.int(20, 80)), counter, { maxTokens: request.thinking.budget_tokens })
      blocks.push({ type: "thinking", pieces: thinking.pieces, text: thinking.text, signature: base62Digest([canonical, "signature"], 88) })
      used += thinking.tokens
    }
    const tool = toolToCall(request, random)
    if (tool !== undefined) {
      const input = sampleJsonSchema(tool.input_schema, random)
      if ((request.tool_choice?.type ?? "auto") === "auto") {
        const preface = shapeOutput(`I'll use the ${tool.name} tool to help with this.`, counter, { maxTokens: request.max_tokens - used })
        blocks.push({ type: "text", pieces: preface.pieces, text: preface.text })
        used += preface.tokens
      }
      blocks.push({ type: "tool_use", id: yield* randomId("toolu_01", 22), name: tool.name, input })
      used += counter.count(tool.name) + counter.count(JSON.stringify(input)) + 10
      return { blocks, outputTokens: used, stopReason: "tool_use", stopSequence: null }
    }
    const text =
      context.controls.reply === "echo" ? lastUserText(request) : generateProse(random, context.controls.outputTokens ?? random.int(16, 96))
    const output = shapeOutput(text, counter, { maxTokens: request.max_tokens - used, stop: request.stop_sequences })
    blocks.push({ type: "text", pieces: output.pieces, text: output.text })
    return {
      blocks,
      outputTokens: used + output.tokens,
      stopReason: stopReasonOf(output.stoppedBy),
      stopSequence: output.stopSequence
    }
  })

const finalBlock = (block: OutputBlock) => {
  switch (block.type) {
    case "thinking":
      return { type: "thinking", thinking: block.text, signature: block.signature }
    case "text":
      return { type: "text", text: block.text }
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input }
  }
}

const startBlock = (block: OutputBlock) => {
  switch (block.type) {
    case "thinking":
      return { type: "thinking", thinking: "", signature: "" }
    case "text":
      return { type: "text", text: "" }
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: {} }
  }
}

const blockDeltas = (block: OutputBlock, chunkTokens: number): Array<Record<string, unknown>> => {
  switch (block.type) {
    case "thinking":
      return [
        ...chunkPieces(block.pieces, chunkTokens).map((piece) => ({ type: "thinking_delta", thinking: piece.text })),
        { type: "signature_delta", signature: block.signature }
      ]
    case "text":
      return chunkPieces(block.pieces, chunkTokens).map((piece) => ({ type: "text_delta", text: piece.text }))
    case "tool_use": {
      const json = JSON.stringify(block.input)
      return [{ type: "input_json_delta", partial_json: "" }, ...(json.match(/[\s\S]{1,16}/g) ?? []).map((part) => ({ type: "input_json_delta", partial_json: part }))]
    }
  }
}

interface Envelope {
  readonly id: string
  readonly model: string
  readonly inputTokens: number
}

const usageOf = (inputTokens: number, outputTokens: number) => ({
  input_tokens: inputTokens,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
  output_tokens: outputTokens,
  service_tier: "standard"
})

const renderJson = (turn: Turn, envelope: Envelope): Reply =>
  jsonReply({
    id: envelope.id,
    type: "message",
    role: "assistant",
    model: envelope.model,
    content: turn.blocks.map(finalBlock),
    stop_reason: turn.stopReason,
    stop_sequence: turn.stopSequence,
    usage: usageOf(envelope.inputTokens, turn.outputTokens)
  })

const renderStream = (turn: Turn, envelope: Envelope, chunkTokens: number): Reply => {
  const events = [
    namedEvent("message_start", {
      type: "message_start",
      message: {
        id: envelope.id,
        type: "message",
        role: "assistant",
        model: envelope.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usageOf(envelope.inputTokens, 1)
      }
    }),
    namedEvent("ping", { type: "ping" })
  ]
  turn.blocks.forEach((block, index) => {
    events.push(namedEvent("content_block_start", { type: "content_block_start", index, content_block: startBlock(block) }))
    for (const delta of blockDeltas(block, chunkTokens)) {
      events.push(namedEvent("content_block_delta", { type: "content_block_delta", index, delta }))
    }
    events.push(namedEvent("content_block_stop", { type: "content_block_stop", index }))
  })
  events.push(
    namedEvent("message_delta", {
      type: "message_delta",
      delta: { stop_reason: turn.stopReason, stop_sequence: turn.stopSequence },
      usage: {
        input_tokens: envelope.inputTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: turn.outputTokens
      }
    }),
    namedEvent("message_stop", { type: "message_stop" })
  )
  return eventsReply(events)
}

export const messagesEndpoint: SimulatedEndpoint<SimulatorTokenizer> = {
  dialect: providerBDialect,
  answer: (body, context) =>
    Effect.gen(function* () {
      const counter = yield* SimulatorTokenizer
      if (context.header("anthropic-version") === undefined) {
        return yield* invalid("anthropic-version: header is required")
      }
      yield* rejectUnknownFields(body, knownMessagesFields, () => "Extra inputs are not permitted")
      const request = yield* decodeRequest(MessagesRequest, body)
      const model = messagesModels.get(request.model)
      if (model === undefined) {
        return yield* new SimulatorError({ kind: "not_found", message: `model: ${request.model}` })
      }
      if (request.max_tokens > model.maxOutputTokens) {
        return yield* invalid(
          `max_tokens: ${request.max_tokens} > ${model.maxOutputTokens}, which is the maximum allowed number of output tokens for ${request.model}`
        )
      }
      yield* checkConversation(request)
      const input = inputTokens(request, counter)
      if (input > model.contextWindow) {
        return yield* invalid(`prompt is too long: ${input} tokens > ${model.contextWindow} maximum`)
      }
      if (input + request.max_tokens > model.contextWindow) {
        return yield* invalid(
          `input length and \`max_tokens\` exceed context limit: ${input} + ${request.max_tokens} > ${model.contextWindow}, decrease input length or \`max_tokens\` and try again`
        )
      }
      const { stream: _stream, ...significant } = body
      const turn = yield* takeTurn(request, context, counter, JSON.stringify(significant))
      const envelope: Envelope = { id: yield* randomId("msg_01", 22), model: request.model, inputTokens: input }
      return request.stream === true ? renderStream(turn, envelope, context.controls.chunkTokens) : renderJson(turn, envelope)
    })
}
