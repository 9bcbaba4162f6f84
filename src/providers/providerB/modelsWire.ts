/**
 * provider_b's models list and model object (`GET /v1/models`, `GET /v1/models/{model_id}`), in the
 * provider's wire format: what the `@anthropic-ai/sdk` library's `models.list()` (a page with `has_more`,
 * `first_id`, `last_id`, paged by `limit`, `after_id`, `before_id`) and `models.retrieve()` read.
 */
import { Either, Schema } from "effect"
import { integerBetween } from "../../domain/fieldSchemas"
import type { WorkspaceModel } from "../../domain/models"
import { InvalidRequest } from "../../domain/refusals"
import { modelCreatedAt } from "../modelsList"

export const ModelInfo = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("model"),
  display_name: Schema.String,
  /** RFC 3339. */
  created_at: Schema.String,
  /** Input tokens the model accepts; null when this service does not know the model's figures (a workspace's own model). */
  max_input_tokens: Schema.NullOr(Schema.Int),
  max_tokens: Schema.NullOr(Schema.Int),
  lifecycle: Schema.Literal("active", "deprecated", "retired"),
  deprecated_at: Schema.NullOr(Schema.String),
  retires_at: Schema.NullOr(Schema.String),
  line: Schema.NullOr(Schema.String),
  capabilities: Schema.Null
}).annotations({ identifier: "ProviderBModelInfo" })
export type ModelInfo = typeof ModelInfo.Type

export const ModelInfosPage = Schema.Struct({
  data: Schema.Array(ModelInfo),
  has_more: Schema.Boolean,
  first_id: Schema.NullOr(Schema.String),
  last_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ProviderBModelInfosPage" })
export type ModelInfosPage = typeof ModelInfosPage.Type

const defaultLimit = 20

/** The page query: at most `limit` models (1–1000, default 20) after `after_id` or before `before_id`. */
export const ModelListQuery = Schema.Struct({
  limit: Schema.optional(Schema.compose(Schema.NumberFromString, integerBetween("limit", 1, 1_000))),
  after_id: Schema.optional(Schema.String),
  before_id: Schema.optional(Schema.String)
})
export type ModelListQuery = typeof ModelListQuery.Type

export const modelInfoOf = (model: WorkspaceModel): ModelInfo => ({
  id: model.id,
  type: "model",
  display_name: model.id,
  created_at: modelCreatedAt(model.id).toISOString(),
  max_input_tokens: model.info?.contextLength ?? null,
  max_tokens: model.info?.maxOutputTokens ?? null,
  lifecycle: "active",
  deprecated_at: null,
  retires_at: null,
  line: null,
  // Not described here: the client library reads null as "unknown".
  capabilities: null
})

const unknownCursor = (param: "after_id" | "before_id", id: string) =>
  new InvalidRequest({
    problem: { status: 400, code: "invalid_request_error", message: `${param}: '${id}' is not a model of this list.`, param }
  })

/**
 * One page of the list. `has_more` looks in the direction of travel: after the page when paging
 * forwards (`after_id`, or neither), before it when paging backwards (`before_id`), as the client
 * library pages on from `last_id` or `first_id`.
 */
export const modelPageOf = (models: ReadonlyArray<WorkspaceModel>, query: ModelListQuery): Either.Either<ModelInfosPage, InvalidRequest> => {
  if (query.after_id !== undefined && query.before_id !== undefined) {
    return Either.left(
      new InvalidRequest({
        problem: { status: 400, code: "invalid_request_error", message: "after_id and before_id cannot both be given.", param: "before_id" }
      })
    )
  }
  const limit = query.limit ?? defaultLimit
  const indexOf = (id: string) => models.findIndex((model) => model.id === id)
  let start = 0
  let end = Math.min(models.length, limit)
  let hasMore = models.length > end
  if (query.after_id !== undefined) {
    const at = indexOf(query.after_id)
    if (at === -1) return Either.left(unknownCursor("after_id", query.after_id))
    start = at + 1
    end = Math.min(models.length, start + limit)
    hasMore = models.length > end
  } else if (query.before_id !== undefined) {
    const at = indexOf(query.before_id)
    if (at === -1) return Either.left(unknownCursor("before_id", query.before_id))
    end = at
    start = Math.max(0, end - limit)
    hasMore = start > 0
  }
  const data = models.slice(start, end).map(modelInfoOf)
  return Either.right({ data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null })
}
