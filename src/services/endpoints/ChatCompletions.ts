import { Context, Effect, Layer } from "effect"
import type { ChatCompletionRequest } from "../../providers/providerA/chatCompletionsWire"
import { exceededOutputLimit, type ModelInfo } from "../../domain/models"
import { usageCeiling } from "../../domain/usageBounds"
import { defaultOutputReservation } from "../../domain/rateLimits"
import { AppConfig } from "../../config"
import { modelsListPath } from "../../providers/modelsList"
import { ModelNotFound, OutputLimitExceeded } from "../../domain/refusals"
import { tooManyMessages } from "../../domain/requestBounds"
import type { SseEvent } from "../../domain/sse"
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
  // The common case first, checked at the end of the text only: a content chunk whose last member is the null usage.
  if (event.data.endsWith(`,${nullUsage}}`)) return { ...event, data: `${event.data.slice(0, -nullUsage.length - 2)}}` }
  if (event.data === "[DONE]" || !event.data.includes('"usage"')) return event
  if (event.data.includes('"choices":[]')) return undefined
  return { ...event, data: withoutNullUsage(event.data) }
}

const nullUsage = '"usage":null'

/** Removes the `"usage":null` member of a chunk's JSON text (string search: this runs for every chunk). */
export const withoutNullUsage = (data: string): string => {
  const after = data.indexOf(`,${nullUsage}`)
  if (after !== -1) {
    const next = data[after + nullUsage.length + 1]
    if (next === "," || next === "}") return data.slice(0, after) + data.slice(after + nullUsage.length + 1)
  }
  const before = data.indexOf(`${nullUsage},`)
  return before === -1 ? data : data.slice(0, before) + data.slice(before + nullUsage.length + 1)
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
          return countPromptParts(tokenizer, promptParts(request), model, "messages", (promptTokens): EndpointCall => ({
            model: request.model,
            reservedTokens: promptTokens + outputReservation(request),
            body: upstreamChatBody(request, model),
            stream,
            estimatedInputTokens: promptTokens,
            // max_completion_tokens bounds the reasoning tokens too, which the usage counts as output.
            usageCeiling: usageCeiling(model, request.max_completion_tokens ?? request.max_tokens),
            relayEvent: stream && !clientWantsUsage(request) ? withoutUsage : undefined
          }))
        }
      }
    })
  )
}
