import { Context, Effect, Layer } from "effect"
import type { FimCompletionRequest } from "../../providers/providerC/fimWire"
import { DEFAULT_FIM_MODEL } from "../../domain/models"
import { withFinishReason } from "../../providers/providerC/protocol"
import { defaultOutputReservation } from "../../domain/rateLimits"
import { AppConfig } from "../../config"
import { modelsListPath } from "../../providers/modelsList"
import { ContextTooLong, ModelNotSupported } from "../../domain/refusals"
import { providerC } from "../../providers/providerC/dialect"
import type { EndpointCheck } from "./endpointCall"
import { usageCeiling } from "../../domain/usageBounds"
import { ModelCatalog } from "../forwarding/ModelCatalog"
import type { Route } from "../forwarding/Routes"

/** The catalog's FIM models the route serves, as a refusal names them (the spec's: "only codemodel-2501 is compatible"). */
const supportedOn = (route: Route, ids: ReadonlyArray<string>): string => {
  const served = ids.filter((id) => route.serves(id, false))
  return served.length === 0 ? DEFAULT_FIM_MODEL : served.join(" or ")
}

/**
 * Tokens the model reads, prompt and suffix, estimated at about four characters a token: no
 * tokenizer of this model family is published. The upstream counts exactly and refuses what
 * this estimate lets through.
 */
export const estimatePromptTokens = (request: FimCompletionRequest): number =>
  Math.ceil((request.prompt.length + request.suffix.length) / 4)

/** The request within the model's context: prompt tokens plus max_tokens, naming the field to change. */
const checkContext = (request: FimCompletionRequest, promptTokens: number, fimContextLength: number): ContextTooLong | undefined => {
  if (request.max_tokens !== undefined && promptTokens + request.max_tokens > fimContextLength) {
    return new ContextTooLong({ field: "max_tokens", promptTokens, maxTokens: request.max_tokens, contextLength: fimContextLength })
  }
  if (promptTokens > fimContextLength) {
    return new ContextTooLong({ field: "prompt", promptTokens, contextLength: fimContextLength })
  }
  return undefined
}

export class FimCompletions extends Context.Tag("FimCompletions")<FimCompletions, {
  readonly check: EndpointCheck<FimCompletionRequest>
}>() {
  static readonly layer = Layer.effect(
    FimCompletions,
    Effect.map(Effect.all([AppConfig, ModelCatalog]), ([{ basePath }, catalog]) => ({
      check: ({ payload: request, region, route }) => {
        // Catalog models only, served by a deployment of the route.
        const fimModel = catalog.find("provider_c", "fim", request.model)
        if (fimModel === undefined || !route.serves(request.model, false)) {
          return Effect.fail(new ModelNotSupported({
            model: request.model,
            supported: supportedOn(route, catalog.ids("provider_c", "fim")),
            modelsPath: modelsListPath(basePath, providerC, region)
          }))
        }
        const promptTokens = estimatePromptTokens(request)
        const tooLong = checkContext(request, promptTokens, fimModel.contextLength)
        if (tooLong !== undefined) return Effect.fail(tooLong)
        const stream = request.stream
        return Effect.succeed({
          model: request.model,
          reservedTokens: promptTokens + (request.max_tokens ?? defaultOutputReservation.fim),
          body: request,
          stream,
          estimatedInputTokens: promptTokens,
          usageCeiling: usageCeiling(fimModel, request.max_tokens),
          ...(stream ? { relayEvent: withFinishReason } : {})
        })
      }
    }))
  )
}
