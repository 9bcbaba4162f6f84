/**
 * provider_a's models list and model object (`GET /v1/models`, `GET /v1/models/{model}`), in the
 * provider's wire format: what the `openai` library's `models.list()` and `models.retrieve()` read.
 */
import { Schema } from "effect"
import type { WorkspaceModel } from "../../domain/models"
import { modelCreatedAt } from "../modelsList"
import { providerA } from "./dialect"

export const Model = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("model"),
  /** Unix seconds. */
  created: Schema.Int,
  owned_by: Schema.String
}).annotations({ identifier: "ProviderAModel" })
export type Model = typeof Model.Type

export const ModelList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Model)
}).annotations({ identifier: "ProviderAModelList" })
export type ModelList = typeof ModelList.Type

export const modelOf = (model: WorkspaceModel): Model => ({
  id: model.id,
  object: "model",
  created: Math.floor(modelCreatedAt(model.id).getTime() / 1_000),
  owned_by: providerA.id
})

export const modelListOf = (models: ReadonlyArray<WorkspaceModel>): ModelList => ({ object: "list", data: models.map(modelOf) })
