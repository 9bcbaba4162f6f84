/**
 * provider_c's models list and model card (`GET /v1/models`, `GET /v1/models/{model_id}`), in the
 * provider's wire format: what the `@mistralai/mistralai` client's `models.list()` and
 * `models.retrieve()` validate (a base model card, `type: "base"`, with its capabilities).
 */
import { Schema } from "effect"
import type { WorkspaceModel } from "../../domain/models"
import { modelCreatedAt } from "../modelsList"
import { providerC } from "./dialect"

export const ModelCapabilities = Schema.Struct({
  completion_chat: Schema.Boolean,
  completion_fim: Schema.Boolean,
  function_calling: Schema.Boolean,
  fine_tuning: Schema.Boolean,
  vision: Schema.Boolean,
  classification: Schema.Boolean
})

export const BaseModelCard = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("model"),
  /** Unix seconds. */
  created: Schema.Int,
  owned_by: Schema.String,
  capabilities: ModelCapabilities,
  name: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  max_context_length: Schema.Int,
  aliases: Schema.Array(Schema.String),
  deprecation: Schema.Null,
  default_model_temperature: Schema.NullOr(Schema.Number),
  type: Schema.Literal("base")
}).annotations({ identifier: "ProviderCModelCard" })
export type BaseModelCard = typeof BaseModelCard.Type

export const ModelList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(BaseModelCard)
}).annotations({ identifier: "ProviderCModelList" })
export type ModelList = typeof ModelList.Type

/** What the client library defaults a card's context length to when it is not given. */
const defaultContextLength = 32_768

export const modelCardOf = (model: WorkspaceModel): BaseModelCard => {
  const fim = model.info?.family === "fim"
  return {
    id: model.id,
    object: "model",
    created: Math.floor(modelCreatedAt(model.id).getTime() / 1_000),
    owned_by: providerC.id,
    // What this service forwards for the model: FIM completions (the only endpoint of provider_c here).
    capabilities: {
      completion_chat: false,
      completion_fim: fim,
      function_calling: false,
      fine_tuning: false,
      vision: false,
      classification: false
    },
    name: model.id,
    description: fim ? "Fill-in-the-middle code completion." : null,
    max_context_length: model.info?.contextLength ?? defaultContextLength,
    aliases: [],
    deprecation: null,
    default_model_temperature: null,
    type: "base"
  }
}

export const modelListOf = (models: ReadonlyArray<WorkspaceModel>): ModelList => ({ object: "list", data: models.map(modelCardOf) })
