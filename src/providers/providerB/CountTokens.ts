import { Context, Effect, Either, Layer } from "effect"
import { AppConfig } from "../../config"
import { isKnownModel } from "../../domain/models"
import type { Principal } from "../../domain/principal"
import { ModelNotFound, type Refusal } from "../../domain/refusals"
import { tooManyMessages } from "../../domain/requestBounds"
import { type Forwarded, Forwarder } from "../../services/Forwarder"
import { Upstreams } from "../../services/Upstreams"
import { modelsListPath } from "../modelsList"
import { providerB } from "./dialect"
import { countTokens } from "./endpoints"
import { checkedBeta } from "./Messages"
import type { CountTokensRequest } from "./messagesWire"
import { countTokensProtocol } from "./protocol"

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
      const upstreams = yield* Upstreams
      const { basePath, upstreamMessagesVersion } = yield* AppConfig
      // As for messages: the upstream gets the version this service speaks, never the caller's.
      const versionHeader = { "anthropic-version": upstreamMessagesVersion }
      return {
        count: (principal, region, request, requestId, beta) => {
          const checked = checkedBeta(beta)
          if (Either.isLeft(checked)) return Effect.fail(checked.left)
          const target = upstreams.resolve(providerB, region)
          if (Either.isLeft(target)) return Effect.fail(target.left)
          if (!isKnownModel("provider_b", "messages", request.model, principal.workspace.settings.byokModels)) {
            return Effect.fail(new ModelNotFound({ model: request.model, modelsPath: modelsListPath(basePath, providerB, region) }))
          }
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
            target: target.right,
            model: request.model,
            path: countTokens.path,
            body: request,
            stream: false,
            upstreamHeaders: checked.right === undefined ? versionHeader : { ...versionHeader, "anthropic-beta": checked.right },
            estimatedInputTokens: 0,
            requestId
          })
        }
      }
    })
  )
}
