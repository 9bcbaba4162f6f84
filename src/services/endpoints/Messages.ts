import { Context, Effect, Either, Layer } from "effect"
import type { MessagesRequest } from "../../providers/providerB/messagesWire"
import { AppConfig } from "../../config"
import { exceededOutputLimit } from "../../domain/models"
import { jsonLength } from "../../domain/jsonLength"
import { isRecord } from "../../providers/protocol"
import { OutputLimitExceeded, PromptTooLong } from "../../domain/refusals"
import { cannotFit, tooManyMessages } from "../../domain/requestBounds"
import { usageCeiling } from "../../domain/usageBounds"
import { ModelCatalog } from "../forwarding/ModelCatalog"
import { checkedMessagesCall } from "./messagesCall"
import type { EndpointCheck } from "./endpointCall"

/** What the provider bills for one image of about a megapixel; base64 data says little about it. */
export const tokensPerMediaBlock = 1_600

/**
 * What the model reads of a request, measured: the characters of its system prompt, messages and tools as JSON
 * (counted, not written out: a body of megabytes is not copied again), with each base64 image or document
 * counted as one media block rather than by the length of its data.
 */
const inputOf = (request: MessagesRequest): { readonly chars: number; readonly mediaBlocks: number } => {
  let mediaBlocks = 0
  const chars = jsonLength([request.system ?? "", request.messages, request.tools ?? []], (value) => {
    if (isRecord(value) && value.type === "base64" && typeof value.data === "string") {
      mediaBlocks += 1
      return { ...value, data: "" }
    }
    return value
  })
  return { chars, mediaBlocks }
}

/**
 * Input tokens of a request, estimated (no tokenizer of this model family is published): about four characters
 * a token for the system prompt, messages and tools, and tokensPerMediaBlock for each image or document.
 */
export const estimateInputTokens = (request: MessagesRequest): number => estimateOf(inputOf(request))

const estimateOf = ({ chars, mediaBlocks }: { readonly chars: number; readonly mediaBlocks: number }): number =>
  Math.ceil(chars / 4) + mediaBlocks * tokensPerMediaBlock

export class Messages extends Context.Tag("Messages")<Messages, {
  /**
   * The caller's beta header is passed upstream (it turns on the features whose fields the body may carry),
   * unlike the caller's version header, which the service sets itself.
   */
  readonly check: EndpointCheck<MessagesRequest>
}>() {
  static readonly layer = Layer.effect(
    Messages,
    Effect.gen(function*() {
      const { basePath, upstreamMessagesVersion } = yield* AppConfig
      const catalog = yield* ModelCatalog
      const context = { basePath, versionHeader: { "anthropic-version": upstreamMessagesVersion } }
      return {
        check: (checked) => {
          const request = checked.payload
          const upstreamHeaders = checkedMessagesCall(context, checked, request.model)
          if (Either.isLeft(upstreamHeaders)) return Effect.fail(upstreamHeaders.left)
          // The gateway's catalog entry (an operator's own included); none for a workspace's own model.
          const model = catalog.find("provider_b", "messages", request.model)
          // Refused here, not by the rate limits: a reservation beyond what the model can write would be a 429.
          const over = exceededOutputLimit(model, { max_tokens: request.max_tokens })
          if (over !== undefined) return Effect.fail(new OutputLimitExceeded({ ...over, model: request.model }))
          // Also checked by the forwarding lane on the raw body, before decoding: same answer either way.
          const crowded = tooManyMessages(catalog, "provider_b", "messages", request)
          if (crowded !== undefined) return Effect.fail(crowded)
          const input = inputOf(request)
          // Text too long for any count to fit the model's context: refused on its length (the estimate is no bound).
          const contextLength = model?.contextLength
          if (contextLength !== undefined && cannotFit(input.chars, contextLength)) {
            return Effect.fail(new PromptTooLong({ field: "messages", found: "length", amount: input.chars, contextLength }))
          }
          const inputTokens = estimateOf(input)
          return Effect.succeed({
            model: request.model,
            reservedTokens: inputTokens + request.max_tokens,
            body: request,
            stream: request.stream === true,
            upstreamHeaders: upstreamHeaders.right,
            estimatedInputTokens: inputTokens,
            usageCeiling: usageCeiling(model, request.max_tokens)
          })
        }
      }
    })
  )
}
