import { Context, Effect, Either, Layer } from "effect"
import type { MessagesRequest } from "./messagesWire"
import { AppConfig } from "../../config"
import { exceededOutputLimit, isKnownModel } from "../../domain/models"
import { isRecord } from "../protocol"
import { modelsListPath } from "../modelsList"
import { messagesProtocol } from "./protocol"
import { InvalidBetaHeader, ModelNotFound, OutputLimitExceeded, type Refusal } from "../../domain/refusals"
import { tooManyMessages } from "../../domain/requestBounds"
import type { Principal } from "../../domain/principal"
import { providerB } from "./dialect"
import { type Forwarded, Forwarder } from "../../services/Forwarder"
import { messages } from "./endpoints"
import { Upstreams } from "../../services/Upstreams"

/** What the provider bills for one image of about a megapixel; base64 data says little about it. */
export const tokensPerMediaBlock = 1_600

/**
 * Input tokens of a request, estimated (no tokenizer of this model family is published): about
 * four characters a token for the system prompt, messages and tools, with each base64 image or
 * document counted as one media block rather than by the length of its data.
 */
export const estimateInputTokens = (request: MessagesRequest): number => {
  let mediaBlocks = 0
  const text = JSON.stringify([request.system ?? "", request.messages, request.tools ?? []], (_key, value: unknown) => {
    if (isRecord(value) && value.type === "base64" && typeof value.data === "string") {
      mediaBlocks += 1
      return { ...value, data: "" }
    }
    return value
  })
  return Math.ceil(text.length / 4) + mediaBlocks * tokensPerMediaBlock
}

/** The protocol's beta header: a comma-separated list of feature names. */
const betaFeatures = /^[A-Za-z0-9._-]+(\s*,\s*[A-Za-z0-9._-]+)*$/

const invalidBeta = new InvalidBetaHeader({ header: "anthropic-beta" })

/** The caller's beta header as it goes upstream (trimmed; none when empty), or its refusal when it is not a list of feature names. */
export const checkedBeta = (beta: string | undefined): Either.Either<string | undefined, InvalidBetaHeader> => {
  const trimmed = beta?.trim()
  if (trimmed === undefined || trimmed === "") return Either.right(undefined)
  return trimmed.length > 1_000 || !betaFeatures.test(trimmed) ? Either.left(invalidBeta) : Either.right(trimmed)
}

export class Messages extends Context.Tag("Messages")<Messages, {
  /**
   * `beta` is the caller's beta header: passed upstream (it turns on the features whose fields
   * the body may carry), unlike the caller's version header, which the service sets itself.
   */
  readonly create: (
    principal: Principal,
    region: string,
    request: MessagesRequest,
    requestId: string | undefined,
    beta?: string | undefined
  ) => Effect.Effect<Forwarded, Refusal>
}>() {
  static readonly layer = Layer.effect(
    Messages,
    Effect.gen(function*() {
      const forwarder = yield* Forwarder
      const upstreams = yield* Upstreams
      // The upstream gets the version this service speaks; the caller's version header is never forwarded.
      const { basePath, upstreamMessagesVersion } = yield* AppConfig
      const versionHeader = { "anthropic-version": upstreamMessagesVersion }
      return {
        create: (principal, region, request, requestId, beta) => {
          const checked = checkedBeta(beta)
          if (Either.isLeft(checked)) return Effect.fail(checked.left)
          const trimmedBeta = checked.right
          const target = upstreams.resolve(providerB, region)
          if (Either.isLeft(target)) return Effect.fail(target.left)
          if (!isKnownModel("provider_b", "messages", request.model, principal.workspace.settings.byokModels)) {
            return Effect.fail(new ModelNotFound({ model: request.model, modelsPath: modelsListPath(basePath, providerB, region) }))
          }
          // Refused here, not by the rate limits: a reservation beyond what the model can write would be a 429.
          const over = exceededOutputLimit("provider_b", "messages", request.model, { max_tokens: request.max_tokens })
          if (over !== undefined) return Effect.fail(new OutputLimitExceeded({ ...over, model: request.model }))
          // Also checked by the forwarding lane on the raw body, before decoding: same answer either way.
          const crowded = tooManyMessages("provider_b", "messages", request)
          if (crowded !== undefined) return Effect.fail(crowded)
          const inputTokens = estimateInputTokens(request)
          return forwarder.forward({
            principal,
            family: messages.family,
            reservedTokens: inputTokens + request.max_tokens,
            protocol: messagesProtocol,
            provider: providerB,
            endpoint: messages.record,
            region,
            target: target.right,
            model: request.model,
            path: messages.path,
            body: request,
            stream: request.stream === true,
            upstreamHeaders: trimmedBeta ? { ...versionHeader, "anthropic-beta": trimmedBeta } : versionHeader,
            estimatedInputTokens: inputTokens,
            requestId
          })
        }
      }
    })
  )
}
