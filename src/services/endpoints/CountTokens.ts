import { Context, Effect, Either, Layer } from "effect"
import { AppConfig } from "../../config"
import type { Principal } from "../../domain/principal"
import type { Refusal } from "../../domain/refusals"
import { tooManyMessages } from "../../domain/requestBounds"
import { type Forwarded, Forwarder } from "../forwarding/Forwarder"
import { Upstreams } from "../forwarding/Upstreams"
import { providerB } from "../../providers/providerB/dialect"
import { countTokens } from "../../providers/providerB/endpoints"
import { checkedMessagesCall } from "./messagesCall"
import type { CountTokensRequest } from "../../providers/providerB/messagesWire"
import { countTokensProtocol } from "../../providers/providerB/protocol"

/**
 * Counts a messages request's input tokens upstream (`/v1/messages/count_tokens`). Checked as a messages
 * request is (region, beta header, model the workspace may use, message count) and rate-limited as one
 * messages request, with no token reservation and no usage-ledger row: a count generates nothing.
 */
export class CountTokens extends Context.Tag("CountTokens")<CountTokens, {
  readonly count: (
    principal: Principal,
    region: string,
    request: CountTokensRequest,
    requestId: string | undefined,
    beta?: string | undefined
  ) => Effect.Effect<Forwarded, Refusal>
}>() {
  static readonly layer = Layer.effect(
    CountTokens,
    Effect.gen(function*() {
      const forwarder = yield* Forwarder
      const { basePath, upstreamMessagesVersion } = yield* AppConfig
      const context = { upstreams: yield* Upstreams, basePath, versionHeader: { "anthropic-version": upstreamMessagesVersion } }
      return {
        count: (principal, region, request, requestId, beta) => {
          const call = checkedMessagesCall(context, principal, region, request.model, beta)
          if (Either.isLeft(call)) return Effect.fail(call.left)
          const crowded = tooManyMessages("provider_b", "messages", request)
          if (crowded !== undefined) return Effect.fail(crowded)
          return forwarder.forward({
            principal,
            family: countTokens.family,
            reservedTokens: 0,
            protocol: countTokensProtocol,
            provider: providerB,
            endpoint: countTokens.record,
            region,
            target: call.right.target,
            model: request.model,
            path: countTokens.path,
            body: request,
            stream: false,
            upstreamHeaders: call.right.upstreamHeaders,
            estimatedInputTokens: 0,
            // Not recorded: a count leaves no row to bound.
            usageCeiling: { inputTokens: 0, outputTokens: 0 },
            requestId
          })
        }
      }
    })
  )
}
