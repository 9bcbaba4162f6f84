import { Context, Effect, Layer } from "effect"
import type { FimCompletionRequest } from "../api/schemas/fim"
import { DEFAULT_FIM_MODEL, findModel } from "../domain/models"
import { fimProtocol, withFinishReason } from "../domain/protocols/providerC"
import { defaultOutputReservation } from "../domain/rateLimits"
import type { Principal } from "../domain/principal"
import { notFound } from "./ChatCompletions"
import { type Forwarded, ForwardFailure, Forwarder } from "./Forwarder"
import { regionsOf } from "./Upstreams"

/** The one model the FIM endpoint serves (the spec: "only codemodel-2501 is compatible"), and its context length. */
const fimModel = findModel("provider_c", "fim", DEFAULT_FIM_MODEL)
export const fimContextLength = fimModel?.contextLength ?? 256_000

const invalid = (param: string, message: string, code: string) =>
  new ForwardFailure({ problem: { status: 400, code, message, param }, headers: {} })

/**
 * Tokens the model reads, prompt and suffix, estimated at about four characters a token: no
 * tokenizer of this model family is published. The upstream counts exactly and refuses what
 * this estimate lets through.
 */
export const estimatePromptTokens = (request: FimCompletionRequest): number =>
  Math.ceil((request.prompt.length + request.suffix.length) / 4)

/** The request within the model's context: prompt tokens plus max_tokens, naming the field to change. */
const checkContext = (request: FimCompletionRequest, promptTokens: number): ForwardFailure | undefined => {
  if (request.max_tokens !== undefined && promptTokens + request.max_tokens > fimContextLength) {
    return invalid(
      "max_tokens",
      `max_tokens ${request.max_tokens} plus the prompt's ${promptTokens} tokens (prompt and suffix, estimated at four characters a token) exceeds the model's context length of ${fimContextLength} tokens: lower max_tokens or shorten the prompt.`,
      "context_length_exceeded"
    )
  }
  if (promptTokens > fimContextLength) {
    return invalid(
      "prompt",
      `The prompt and suffix have about ${promptTokens} tokens (estimated at four characters a token), more than the model's context length of ${fimContextLength} tokens.`,
      "context_length_exceeded"
    )
  }
  return undefined
}

export class FimCompletions extends Context.Tag("FimCompletions")<FimCompletions, {
  readonly create: (
    principal: Principal,
    region: string,
    request: FimCompletionRequest,
    requestId: string | undefined
  ) => Effect.Effect<Forwarded, ForwardFailure>
}>() {
  static readonly layer = Layer.effect(
    FimCompletions,
    Effect.map(Forwarder, (forwarder) => ({
      create: (principal, region, request, requestId) => {
        if (!regionsOf.provider_c.includes(region)) {
          return Effect.fail(notFound("region", `Region '${region}' does not exist. FIM completion is served in eu only.`, "region_not_found"))
        }
        if (request.model !== DEFAULT_FIM_MODEL) {
          return Effect.fail(
            invalid("model", `Invalid model: ${request.model}. FIM completion supports ${DEFAULT_FIM_MODEL} only.`, "invalid_model")
          )
        }
        const promptTokens = estimatePromptTokens(request)
        const tooLong = checkContext(request, promptTokens)
        if (tooLong !== undefined) return Effect.fail(tooLong)
        const stream = request.stream
        return forwarder.forward({
          principal,
          family: "fim",
          reservedTokens: promptTokens + (request.max_tokens ?? defaultOutputReservation.fim),
          protocol: fimProtocol,
          provider: "provider_c",
          endpoint: "fim_completions",
          region,
          model: request.model,
          path: "/v1/fim/completions",
          body: request,
          stream,
          estimatedInputTokens: promptTokens,
          ...(stream ? { relayEvent: withFinishReason } : {}),
          requestId
        })
      }
    }))
  )
}
