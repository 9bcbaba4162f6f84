import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../config"
import { exceededOutputLimit } from "../../domain/models"
import { defaultOutputReservation } from "../../domain/rateLimits"
import { ModelNotFound, OutputLimitExceeded } from "../../domain/refusals"
import { usageCeiling } from "../../domain/usageBounds"
import { modelsListPath } from "../../providers/modelsList"
import { providerA } from "../../providers/providerA/dialect"
import type { ResponsesRequest } from "../../providers/providerA/responsesWire"
import { ModelCatalog } from "../forwarding/ModelCatalog"
import { Tokenizer } from "../forwarding/Tokenizer"
import { countPromptParts } from "./promptTokens"
import type { EndpointCall, EndpointCheck } from "./endpointCall"
import { servedOnRoute } from "./servedOnRoute"

/**
 * The text the model reads, in parts: the instructions, the input (one item a part) and the JSON of the tool
 * definitions, which the provider bills as prompt too.
 */
export const responsesPromptParts = (request: Pick<ResponsesRequest, "instructions" | "input" | "tools">): ReadonlyArray<string> => [
  ...(request.instructions === undefined ? [] : [request.instructions]),
  ...(typeof request.input === "string" ? [request.input] : request.input.map((item) => JSON.stringify(item))),
  ...(request.tools !== undefined && request.tools.length > 0 ? [JSON.stringify(request.tools)] : [])
]

/**
 * The request as it goes upstream: stateless whatever the client's default (`store` is true upstream when
 * omitted), without the fields the service does not forward.
 */
export const upstreamResponsesBody = (request: ResponsesRequest): Record<string, unknown> => {
  const { service_tier: _tier, ...body } = request
  return { ...body, store: false }
}

/**
 * The Responses API's check: the chat models are its models (on the route, or the workspace's own list), its
 * output limit, its prompt against the context; nothing of the conversation is kept (the wire schema refuses
 * what would need it).
 */
export class Responses extends Context.Tag("Responses")<Responses, {
  readonly check: EndpointCheck<ResponsesRequest>
}>() {
  static readonly layer = Layer.effect(
    Responses,
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
          const over = exceededOutputLimit(model, { max_output_tokens: request.max_output_tokens })
          if (over !== undefined) return Effect.fail(new OutputLimitExceeded({ ...over, model: request.model }))
          const stream = request.stream === true
          return countPromptParts(tokenizer, responsesPromptParts(request), model, "input", (promptTokens): EndpointCall => ({
            model: request.model,
            reservedTokens: promptTokens + (request.max_output_tokens ?? defaultOutputReservation.responses),
            body: upstreamResponsesBody(request),
            stream,
            estimatedInputTokens: promptTokens,
            // max_output_tokens bounds the reasoning tokens too, which the usage counts as output.
            usageCeiling: usageCeiling(model, request.max_output_tokens)
          }))
        }
      }
    })
  )
}
