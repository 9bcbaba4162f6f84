import { Context, Effect, Layer } from "effect"
import type { EmbeddingRequest } from "../../providers/providerA/embeddingsWire"
import { AppConfig } from "../../config"
import { modelsListPath } from "../../providers/modelsList"
import { FieldNotSupported, InputTooLong, ModelNotSupported } from "../../domain/refusals"
import { cannotFit, maxTokenBytes } from "../../domain/requestBounds"
import { providerA } from "../../providers/providerA/dialect"
import { countTokens } from "../forwarding/tokenCounting"
import { Tokenizer } from "../forwarding/Tokenizer"
import type { EndpointCheck } from "./endpointCall"

/** The one embeddings model the spec supports, and its limit per input. */
export const embeddingModel = "text-embedding-ada-002"
export const maxTokensPerInput = 8192

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
      const { basePath } = yield* AppConfig
      return {
        check: ({ payload: request, region, route }) =>
          Effect.gen(function*() {
            if (request.model !== embeddingModel || !route.serves(request.model, false)) {
              return yield* Effect.fail(new ModelNotSupported({
                model: request.model,
                supported: embeddingModel,
                modelsPath: modelsListPath(basePath, providerA, region)
              }))
            }
            if (request.dimensions !== undefined) {
              return yield* Effect.fail(new FieldNotSupported({ field: "dimensions", model: embeddingModel }))
            }
            // Each input within the model's limit, counted with the model's own encoding.
            let total = 0
            const inputs = inputsOf(request.input)
            for (const { param, value } of inputs) {
              // Too long for any count to fit: refused on its length, before counting.
              if (typeof value === "string" && cannotFit(value.length, maxTokensPerInput)) {
                return yield* Effect.fail(new InputTooLong({ param, tokens: Math.ceil(value.length / maxTokenBytes), limit: maxTokensPerInput }))
              }
              // Long inputs are counted in slices (the event loop served between them), and only up to the limit.
              const tokens = typeof value === "string" ? yield* countTokens(tokenizer, "cl100k_base", value, maxTokensPerInput) : value.length
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
