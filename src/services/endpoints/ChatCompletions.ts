import { Context, Effect, Layer } from "effect"
import type { ChatCompletionRequest } from "../../providers/providerA/chatCompletionsWire"
import { exceededOutputLimit, type ModelInfo } from "../../domain/models"
import { usageCeiling } from "../../domain/usageBounds"
import { defaultOutputReservation } from "../../domain/rateLimits"
import { AppConfig } from "../../config"
import { modelsListPath } from "../../providers/modelsList"
import { ModelNotFound, OutputLimitExceeded } from "../../domain/refusals"
import { tooManyMessages } from "../../domain/requestBounds"
import { noDrops, type SseEvent } from "../../domain/sse"
import { providerA } from "../../providers/providerA/dialect"
import { ModelCatalog } from "../forwarding/ModelCatalog"
import { Tokenizer } from "../forwarding/Tokenizer"
import type { EndpointCall, EndpointCheck } from "./endpointCall"
import { countPromptParts } from "./promptTokens"
import { servedOnRoute } from "./servedOnRoute"

/**
 * Fields the spec lists as unsupported. They never fail a request and are never forwarded as
 * given: n, service_tier and parallel_tool_calls are dropped (one choice, the upstream's defaults);
 * stream_options is replaced by the service's own `{ include_usage: true }` on streams, so usage is
 * always known, and the usage chunk reaches the client only when it asked for it.
 */
const unsupported = ["n", "service_tier", "parallel_tool_calls", "stream_options"] as const

/** The request as it goes upstream; `model` is its catalog entry (none for a workspace's own model). */
export const upstreamChatBody = (request: ChatCompletionRequest, model: ModelInfo | undefined): Record<string, unknown> => {
  const body: Record<string, unknown> = { ...request }
  for (const field of unsupported) delete body[field]
  if (request.stream === true) body.stream_options = { include_usage: true }
  // The spec accepts max_tokens for every model, but the provider refuses it for reasoning models
  // and asks for max_completion_tokens (which wins when both are given, as it does here).
  if (request.max_tokens !== undefined && model?.reasoning === true) {
    delete body.max_tokens
    body.max_completion_tokens = request.max_completion_tokens ?? request.max_tokens
  }
  return body
}

/** Whether the client asked for the usage chunk itself (stream_options.include_usage). */
const clientWantsUsage = (request: ChatCompletionRequest): boolean => {
  const options: unknown = request.stream_options
  return typeof options === "object" && options !== null && (options as { include_usage?: unknown }).include_usage === true
}

/**
 * For clients that did not ask for usage: the chunks look as they would without include_usage —
 * the final usage-only chunk is dropped and the `"usage":null` of the others removed.
 */
export const withoutUsage = (event: SseEvent): SseEvent | undefined => {
  const at = nullUsageCut(event.data)
  if (at === undefined) return undefined
  return at === -1 ? event : { ...event, data: event.data.slice(0, at) + event.data.slice(at + nullUsageCutLength) }
}

/**
 * withoutUsage made on a chunk whose text is exactly its events' encoding (see isEncodedEvents: each event one
 * `data: ` line, nothing else): the ranges of that text it removes, start and end pairs in order (none when no event
 * changes), for the relay to cut from the text or from the upstream's bytes of it (see relayedChunk).
 */
export const usageDrops = (events: ReadonlyArray<SseEvent>): ReadonlyArray<number> => {
  let drops: Array<number> | undefined
  // `start` is where the next event's encoding begins.
  let start = 0
  for (const { data, event } of events) {
    const end = start + (event === undefined ? 0 : event.length + 8) + data.length + 8
    const at = nullUsageCut(data)
    if (at !== -1) {
      // Dropped: its whole encoding; else its null usage member, inside the data line that ends the encoding.
      const from = at === undefined ? start : end - 2 - data.length + at
      const to = at === undefined ? end : from + nullUsageCutLength
      // A literal the first time: an empty array's first push reserves room for seventeen.
      if (drops === undefined) drops = [from, to]
      else drops.push(from, to)
    }
    start = end
  }
  return drops ?? noDrops
}

const nullUsage = '"usage":null'

/** The null usage member and its comma: what is removed of a chunk. */
const nullUsageCutLength = nullUsage.length + 1

/**
 * Where withoutUsage cuts a chunk's data: the index of its null usage member with its comma (nullUsageCutLength
 * characters), -1 to leave it as it is, undefined to drop it. String search only: this runs for every chunk.
 */
const nullUsageCut = (data: string): number | undefined => {
  // The common case first, checked at the end of the text only: a content chunk whose last member is the null usage.
  if (data.endsWith(`,${nullUsage}}`)) return data.length - nullUsageCutLength - 1
  if (data === "[DONE]" || !data.includes('"usage"')) return -1
  if (data.includes('"choices":[]')) return undefined
  return nullUsageAt(data)
}

/** Where the `"usage":null` member of a chunk's JSON text is, with its comma; -1 when it has none. */
const nullUsageAt = (data: string): number => {
  const after = data.indexOf(`,${nullUsage}`)
  if (after !== -1) {
    const next = data[after + nullUsageCutLength]
    if (next === "," || next === "}") return after
  }
  return data.indexOf(`${nullUsage},`)
}

/** Removes the `"usage":null` member of a chunk's JSON text. */
export const withoutNullUsage = (data: string): string => {
  const at = nullUsageAt(data)
  return at === -1 ? data : data.slice(0, at) + data.slice(at + nullUsageCutLength)
}

export { estimateTokens, jsonTokensPerPart } from "./promptTokens"

/**
 * The text the model reads, in parts: the conversation (contents, names, tool calls and their arguments, one
 * message a part) and the JSON of the tool and legacy function definitions, which the provider bills as prompt too.
 */
export const promptParts = (request: Pick<ChatCompletionRequest, "messages" | "tools" | "functions">): ReadonlyArray<string> => {
  // One array, no spread copies: this runs for every chat request.
  const parts = request.messages.map((message) => JSON.stringify(message))
  if (request.tools !== undefined && request.tools.length > 0) parts.push(JSON.stringify(request.tools))
  if (request.functions !== undefined && request.functions.length > 0) parts.push(JSON.stringify(request.functions))
  return parts
}

/** The prompt's parts as one text, a line break between them: what is counted. */
export const promptText = (request: Pick<ChatCompletionRequest, "messages" | "tools" | "functions">): string => promptParts(request).join("\n")


/** Output the request may produce: what it asks for, else the documented default reservation. */
const outputReservation = (request: ChatCompletionRequest): number =>
  request.max_completion_tokens ?? request.max_tokens ?? defaultOutputReservation.chat_completions

export class ChatCompletions extends Context.Tag("ChatCompletions")<ChatCompletions, {
  readonly check: EndpointCheck<ChatCompletionRequest>
}>() {
  static readonly layer = Layer.effect(
    ChatCompletions,
    Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      const catalog = yield* ModelCatalog
      const { basePath } = yield* AppConfig
      return {
        check: ({ payload: request, principal, region, route }) => {
          if (!servedOnRoute(route, principal, "provider_a", "chat_completions", request.model)) {
            return Effect.fail(new ModelNotFound({ model: request.model, modelsPath: modelsListPath(basePath, providerA, region) }))
          }
          // The gateway's catalog entry (an operator's own included); none for a workspace's own model.
          const model = catalog.find("provider_a", "chat_completions", request.model)
          // A 400 naming the field, as the provider answers; as a reservation it would be a misleading 429.
          const over = exceededOutputLimit(model, {
            max_completion_tokens: request.max_completion_tokens,
            max_tokens: request.max_tokens
          })
          if (over !== undefined) return Effect.fail(new OutputLimitExceeded({ ...over, model: request.model }))
          // Also checked by the forwarding lane on the raw body, before decoding: same answer either way.
          const crowded = tooManyMessages(catalog, "provider_a", "chat_completions", request)
          if (crowded !== undefined) return Effect.fail(crowded)
          const stream = request.stream === true
          // The client did not ask for the usage chunk: each chunk is relayed as it would be without include_usage.
          const dropsUsage = stream && !clientWantsUsage(request)
          return countPromptParts(tokenizer, promptParts(request), model, "messages", (promptTokens): EndpointCall => ({
            model: request.model,
            reservedTokens: promptTokens + outputReservation(request),
            body: upstreamChatBody(request, model),
            stream,
            estimatedInputTokens: promptTokens,
            // max_completion_tokens bounds the reasoning tokens too, which the usage counts as output.
            usageCeiling: usageCeiling(model, request.max_completion_tokens ?? request.max_tokens),
            relayEvent: dropsUsage ? withoutUsage : undefined,
            relayDrops: dropsUsage ? usageDrops : undefined
          }))
        }
      }
    })
  )
}
