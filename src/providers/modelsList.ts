import { Either } from "effect"
import type { WorkspaceModel } from "../domain/models"
import { ModelNotFound } from "../domain/refusals"
import type { Provider } from "./provider"

/** Where a provider's models list is served for a region (under BASE_PATH): what an unknown model's refusal points to. */
export const modelsListPath = (basePath: string, provider: Provider, region: string): string =>
  `${basePath}/${provider.id}/${encodeURIComponent(region)}/v1/models`

/**
 * One model of a models list (the models the route serves that the caller's workspace may use: nothing is asked
 * upstream), else a 404 naming the list.
 */
export const listedModel = (
  models: ReadonlyArray<WorkspaceModel>,
  id: string,
  listPath: string
): Either.Either<WorkspaceModel, ModelNotFound> => {
  const model = models.find((candidate) => candidate.id === id)
  return model === undefined ? Either.left(new ModelNotFound({ model: id, modelsPath: listPath })) : Either.right(model)
}

/** The catalog's date for a model whose id does not carry one: when a model was added here is not recorded. */
const catalogDate = new Date(Date.UTC(2025, 0, 1))

/** When a model was made, as the lists show it: the date its id ends with (…-20250929), else the catalog's date. */
export const modelCreatedAt = (id: string): Date => {
  const dated = /-(\d{4})(\d{2})(\d{2})$/.exec(id)
  if (dated === null) return catalogDate
  const date = new Date(`${dated[1]}-${dated[2]}-${dated[3]}T00:00:00.000Z`)
  // Not a calendar date (…-20251399): Date would roll it over, or give no time at all.
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== `${dated[1]}-${dated[2]}-${dated[3]}` ? catalogDate : date
}
