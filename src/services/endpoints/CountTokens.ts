import { Context, Effect, Either, Layer } from "effect"
import { AppConfig } from "../../config"
import { tooManyMessages } from "../../domain/requestBounds"
import type { CountTokensRequest } from "../../providers/providerB/messagesWire"
import { ModelCatalog } from "../forwarding/ModelCatalog"
import type { EndpointCheck } from "./endpointCall"
import { checkedMessagesCall } from "./messagesCall"

/**
 * Counts a messages request's input tokens upstream (`/v1/messages/count_tokens`). Checked as a messages
 * request is (region, beta header, model the workspace may use, message count) and rate-limited as one
 * messages request, with no token reservation and no usage-ledger row: a count generates nothing.
 */
export class CountTokens extends Context.Tag("CountTokens")<CountTokens, {
  readonly check: EndpointCheck<CountTokensRequest>
}>() {
  static readonly layer = Layer.effect(
    CountTokens,
    Effect.map(Effect.all([AppConfig, ModelCatalog]), ([{ basePath, upstreamMessagesVersion }, catalog]) => {
      const context = { basePath, versionHeader: { "anthropic-version": upstreamMessagesVersion } }
      return {
        check: (checked) => {
          const request = checked.payload
          const upstreamHeaders = checkedMessagesCall(context, checked, request.model)
          if (Either.isLeft(upstreamHeaders)) return Effect.fail(upstreamHeaders.left)
          const crowded = tooManyMessages(catalog, "provider_b", "messages", request)
          if (crowded !== undefined) return Effect.fail(crowded)
          return Effect.succeed({
            model: request.model,
            reservedTokens: 0,
            body: request,
            stream: false,
            upstreamHeaders: upstreamHeaders.right,
            estimatedInputTokens: 0,
            // Not recorded: a count leaves no row to bound.
            usageCeiling: { inputTokens: 0, outputTokens: 0 }
          })
        }
      }
    })
  )
}
