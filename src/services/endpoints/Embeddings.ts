import { Context, Effect, Layer } from "effect"
import type { EmbeddingRequest } from "../../providers/providerA/embeddingsWire"
import { AppConfig } from "../../config"
import { modelsListPath } from "../../providers/modelsList"
import { FieldNotSupported, InputTooLong, ModelNotSupported } from "../../domain/refusals"
import { cannotFit, maxTokenBytes } from "../../domain/requestBounds"
import { providerA } from "../../providers/providerA/dialect"
import { countedAtOnce, countTokens } from "../forwarding/tokenCounting"
import { ModelCatalog } from "../forwarding/ModelCatalog"
import { Tokenizer } from "../forwarding/Tokenizer"
import type { Route } from "../forwarding/Routes"
import type { EndpointCall, EndpointCheck } from "./endpointCall"

/** The embeddings model the spec supports (an operator's catalog may add others). */
export const embeddingModel = "text-embedding-ada-002"

/** The catalog's embeddings models the route serves, as a refusal names them. */
const supportedOn = (route: Route, ids: ReadonlyArray<string>): string => {
  const served = ids.filter((id) => route.serves(id, false))
  return served.length === 0 ? embeddingModel : served.join(" or ")
}

/** Each input as text or as tokens, with the param that names it (`input` for a single input). */
const inputsOf = (input: EmbeddingRequest["input"]): ReadonlyArray<{ readonly param: string; readonly value: string | ReadonlyArray<number> }> => {
  if (typeof input === "string") return [{ param: "input", value: input }]
  if (input.every((item) => typeof item === "number")) return [{ param: "input", value: input as ReadonlyArray<number> }]
  return (input as ReadonlyArray<string | ReadonlyArray<number>>).map((value, index) => ({ param: `input[${index}]`, value }))
}

export class Embeddings extends Context.Tag("Embeddings")<Embeddings, {
  readonly check: EndpointCheck<EmbeddingRequest>
}>() {
  static readonly layer = Layer.effect(
    Embeddings,
    Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      const catalog = yield* ModelCatalog
      const { basePath } = yield* AppConfig
      return {
        check: ({ payload: request, region, route }) => {
          // Catalog models only (the workspace's own list is not read here), served by a deployment of the route.
          const model = catalog.find("provider_a", "embeddings", request.model)
          if (model === undefined || !route.serves(request.model, false)) {
            return Effect.fail(new ModelNotSupported({
              model: request.model,
              supported: supportedOn(route, catalog.ids("provider_a", "embeddings")),
              modelsPath: modelsListPath(basePath, providerA, region)
            }))
          }
          if (request.dimensions !== undefined) {
            return Effect.fail(new FieldNotSupported({ field: "dimensions", model: request.model }))
          }
          // The catalog's context of the model is its limit per input (8,192 for the spec's).
          const maxTokensPerInput = model.contextLength
          const encoding = model.tokenizer
          const inputs = inputsOf(request.input)
          const tooLong = (param: string, tokens: number) => new InputTooLong({ param, tokens, limit: maxTokensPerInput })
          // Each input within the model's limit, counted with the model's own encoding, from `index` on: at once
          // while counting needs no step (short inputs, the table loaded), else in steps of its own (a table to
          // load, a long input counted in slices with the event loop served between them, only up to the limit).
          const counted = (index: number, total: number): Effect.Effect<EndpointCall, InputTooLong> => {
            for (; index < inputs.length; index++) {
              const { param, value } = inputs[index]!
              // Too long for any count to fit: refused on its length, before counting.
              if (typeof value === "string" && cannotFit(value.length, maxTokensPerInput)) {
                return Effect.fail(tooLong(param, Math.ceil(value.length / maxTokenBytes)))
              }
              let tokens: number
              if (typeof value !== "string") tokens = value.length
              else if (encoding === "estimate") tokens = Math.ceil(value.length / 4)
              else {
                const now = countedAtOnce(tokenizer, encoding, [value])
                if (now === undefined) {
                  const next = index + 1
                  return Effect.flatMap(countTokens(tokenizer, encoding, value, maxTokensPerInput), (tokens) =>
                    tokens > maxTokensPerInput ? Effect.fail(tooLong(param, tokens)) : counted(next, total + tokens))
                }
                tokens = now
              }
              if (tokens > maxTokensPerInput) return Effect.fail(tooLong(param, tokens))
              total += tokens
            }
            return Effect.succeed({
              model: request.model,
              reservedTokens: total,
              body: request,
              stream: false,
              estimatedInputTokens: total,
              // Each input within its model's context; embeddings write nothing.
              usageCeiling: { inputTokens: inputs.length * maxTokensPerInput, outputTokens: 0 }
            })
          }
          return counted(0, 0)
        }
      }
    })
  )
}
