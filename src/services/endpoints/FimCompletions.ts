import { Context, Effect, Either, Layer } from "effect"
import type { FimCompletionRequest } from "../../providers/providerC/fimWire"
import { DEFAULT_FIM_MODEL, findModel } from "../../domain/models"
import { fimProtocol, withFinishReason } from "../../providers/providerC/protocol"
import { defaultOutputReservation } from "../../domain/rateLimits"
import type { Principal } from "../../domain/principal"
import { AppConfig } from "../../config"
import { modelsListPath } from "../../providers/modelsList"
import { ContextTooLong, ModelNotSupported, type Refusal } from "../../domain/refusals"
import { providerC } from "../../providers/providerC/dialect"
import { type Forwarded, Forwarder } from "../forwarding/Forwarder"
import { fimCompletions } from "../../providers/providerC/endpoints"
import { Upstreams } from "../forwarding/Upstreams"
import { usageCeiling } from "../../domain/usageBounds"

/** The one model the FIM endpoint serves (the spec: "only codemodel-2501 is compatible"), and its context length. */
const fimModel = findModel("provider_c", "fim", DEFAULT_FIM_MODEL)
export const fimContextLength = fimModel?.contextLength ?? 256_000

/**
 * Tokens the model reads, prompt and suffix, estimated at about four characters a token: no
 * tokenizer of this model family is published. The upstream counts exactly and refuses what
 * this estimate lets through.
 */
export const estimatePromptTokens = (request: FimCompletionRequest): number =>
  Math.ceil((request.prompt.length + request.suffix.length) / 4)

/** The request within the model's context: prompt tokens plus max_tokens, naming the field to change. */
const checkContext = (request: FimCompletionRequest, promptTokens: number): ContextTooLong | undefined => {
  if (request.max_tokens !== undefined && promptTokens + request.max_tokens > fimContextLength) {
    return new ContextTooLong({ field: "max_tokens", promptTokens, maxTokens: request.max_tokens, contextLength: fimContextLength })
  }
  if (promptTokens > fimContextLength) {
    return new ContextTooLong({ field: "prompt", promptTokens, contextLength: fimContextLength })
  }
  return undefined
}

export class FimCompletions extends Context.Tag("FimCompletions")<FimCompletions, {
  readonly create: (
    principal: Principal,
    region: string,
    request: FimCompletionRequest,
    requestId: string | undefined
  ) => Effect.Effect<Forwarded, Refusal>
}>() {
  static readonly layer = Layer.effect(
    FimCompletions,
    Effect.map(Effect.all([Forwarder, Upstreams, AppConfig]), ([forwarder, upstreams, { basePath }]) => ({
      create: (principal, region, request, requestId) => {
        const target = upstreams.resolve(providerC, region)
        if (Either.isLeft(target)) return Effect.fail(target.left)
        if (request.model !== DEFAULT_FIM_MODEL) {
          return Effect.fail(new ModelNotSupported({
            model: request.model,
            supported: DEFAULT_FIM_MODEL,
            modelsPath: modelsListPath(basePath, providerC, region)
          }))
        }
        const promptTokens = estimatePromptTokens(request)
        const tooLong = checkContext(request, promptTokens)
        if (tooLong !== undefined) return Effect.fail(tooLong)
        const stream = request.stream
        return forwarder.forward({
          principal,
          family: fimCompletions.family,
          reservedTokens: promptTokens + (request.max_tokens ?? defaultOutputReservation.fim),
          protocol: fimProtocol,
          provider: providerC,
          endpoint: fimCompletions.record,
          region,
          target: target.right,
          model: request.model,
          path: fimCompletions.path,
          body: request,
          stream,
          estimatedInputTokens: promptTokens,
          usageCeiling: usageCeiling(fimModel, request.max_tokens),
          ...(stream ? { relayEvent: withFinishReason } : {}),
          requestId
        })
      }
    }))
  )
}
