import { Context, Effect, Layer } from "effect"
import type { EmbeddingRequest } from "../../providers/providerA/embeddingsWire"
import { AppConfig } from "../../config"
import { modelsListPath } from "../../providers/modelsList"
import { FieldNotSupported, InputTooLong, ModelNotSupported } from "../../domain/refusals"
import { cannotFit, maxTokenBytes } from "../../domain/requestBounds"
import { providerA } from "../../providers/providerA/dialect"
import { countTokens } from "../forwarding/tokenCounting"
import { ModelCatalog } from "../forwarding/ModelCatalog"
import { Tokenizer } from "../forwarding/Tokenizer"
import type { Route } from "../forwarding/Routes"
import type { EndpointCheck } from "./endpointCall"

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
        check: ({ payload: request, region, route }) =>
          Effect.gen(function*() {
            // Catalog models only (the workspace's own list is not read here), served by a deployment of the route.
            const model = catalog.find("provider_a", "embeddings", request.model)
            if (model === undefined || !route.serves(request.model, false)) {
              return yield* Effect.fail(new ModelNotSupported({
                model: request.model,
                supported: supportedOn(route, catalog.ids("provider_a", "embeddings")),
                modelsPath: modelsListPath(basePath, providerA, region)
              }))
            }
            if (request.dimensions !== undefined) {
              return yield* Effect.fail(new FieldNotSupported({ field: "dimensions", model: request.model }))
            }
            // The catalog's context of the model is its limit per input (8,192 for the spec's).
            const maxTokensPerInput = model.contextLength
            const encoding = model.tokenizer
            // Each input within the model's limit, counted with the model's own encoding.
            let total = 0
            const inputs = inputsOf(request.input)
            for (const { param, value } of inputs) {
              // Too long for any count to fit: refused on its length, before counting.
              if (typeof value === "string" && cannotFit(value.length, maxTokensPerInput)) {
                return yield* Effect.fail(new InputTooLong({ param, tokens: Math.ceil(value.length / maxTokenBytes), limit: maxTokensPerInput }))
              }
              // Long inputs are counted in slices (the event loop served between them), and only up to the limit.
              const tokens = typeof value !== "string"
                ? value.length
                : encoding === "estimate"
                ? Math.ceil(value.length / 4)
                : yield* countTokens(tokenizer, encoding, value, maxTokensPerInput)
              if (tokens > maxTokensPerInput) {
                return yield* Effect.fail(new InputTooLong({ param, tokens, limit: maxTokensPerInput }))
              }
              total += tokens
            }
            return {
              model: request.model,
              reservedTokens: total,
              body: request,
              stream: false,
              estimatedInputTokens: total,
              // Each input within its model's context; embeddings write nothing.
              usageCeiling: { inputTokens: inputs.length * maxTokensPerInput, outputTokens: 0 }
            }
          })
      }
    })
  )
}
