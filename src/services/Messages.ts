import { Context, Effect, Layer } from "effect"
import type { MessagesRequest } from "../api/schemas/messages"
import { AppConfig } from "../config"
import { exceededOutputLimit, isKnownModel } from "../domain/models"
import { isRecord } from "../domain/protocols/protocol"
import { messagesProtocol } from "../domain/protocols/providerB"
import type { Principal } from "./AuthService"
import { notFound } from "./ChatCompletions"
import { type Forwarded, ForwardFailure, Forwarder } from "./Forwarder"
import { regionsOf } from "./Upstreams"

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

export class Messages extends Context.Tag("Messages")<Messages, {
  readonly create: (
    principal: Principal,
    region: string,
    request: MessagesRequest,
    requestId: string | undefined
  ) => Effect.Effect<Forwarded, ForwardFailure>
}>() {
  static readonly layer = Layer.effect(
    Messages,
    Effect.gen(function*() {
      const forwarder = yield* Forwarder
      // The upstream gets the version this service speaks; the caller's version and beta headers are never forwarded.
      const upstreamHeaders = { "anthropic-version": (yield* AppConfig).upstreamMessagesVersion }
      return {
        create: (principal, region, request, requestId) => {
          if (!regionsOf.provider_b.includes(region)) {
            return Effect.fail(notFound("region", `Region '${region}' does not exist. Use eu or us.`, "region_not_found"))
          }
          if (!isKnownModel("provider_b", "messages", request.model, principal.workspace.settings.byokModels)) {
            return Effect.fail(notFound("model", `model: ${request.model} does not exist or you do not have access to it.`, "model_not_found"))
          }
          // Refused here, not by the rate limits: a reservation beyond what the model can write would be a 429.
          const over = exceededOutputLimit("provider_b", "messages", request.model, { max_tokens: request.max_tokens })
          if (over !== undefined) {
            return Effect.fail(
              new ForwardFailure({
                problem: {
                  status: 400,
                  code: "invalid_value",
                  message: `max_tokens: ${over.requested} > ${over.limit}, which is the maximum allowed number of output tokens for ${request.model}.`,
                  param: over.field
                },
                headers: {}
              })
            )
          }
          const inputTokens = estimateInputTokens(request)
          return forwarder.forward({
            principal,
            family: "messages",
            reservedTokens: inputTokens + request.max_tokens,
            protocol: messagesProtocol,
            provider: "provider_b",
            endpoint: "messages",
            region,
            model: request.model,
            path: "/v1/messages",
            body: request,
            stream: request.stream === true,
            upstreamHeaders,
            estimatedInputTokens: inputTokens,
            requestId
          })
        }
      }
    })
  )
}
