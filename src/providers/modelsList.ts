import { Either } from "effect"
import { type WorkspaceModel, workspaceModel, workspaceModels } from "../domain/models"
import type { Principal } from "../domain/principal"
import { ModelNotFound, RegionNotServed } from "../domain/refusals"
import type { Provider } from "./provider"

/** Whether the provider is served in a region (the forwarded endpoints' rule, Upstreams.resolve). */
const serves = (provider: Provider, region: string): boolean => (provider.regions as ReadonlyArray<string>).includes(region)

/** Where a provider's models list is served for a region (under BASE_PATH): what an unknown model's refusal points to. */
export const modelsListPath = (basePath: string, provider: Provider, region: string): string =>
  `${basePath}/${provider.id}/${encodeURIComponent(region)}/v1/models`

/**
 * The models list of a provider for the caller's workspace, served by the service itself (nothing is asked
 * upstream): the models its forwarded endpoints accept for that workspace (domain/models.ts, workspaceModels).
 */
export const listedModels = (
  provider: Provider,
  region: string,
  principal: Principal
): Either.Either<ReadonlyArray<WorkspaceModel>, RegionNotServed> =>
  serves(provider, region)
    ? Either.right(workspaceModels(provider.id, principal.workspace.settings.byokModels))
    : Either.left(new RegionNotServed({ region }))

/** One model of the list, or why not (an unknown region, a model the workspace may not use). */
export const listedModel = (
  provider: Provider,
  region: string,
  principal: Principal,
  id: string,
  basePath: string
): Either.Either<WorkspaceModel, RegionNotServed | ModelNotFound> => {
  if (!serves(provider, region)) return Either.left(new RegionNotServed({ region }))
  const model = workspaceModel(provider.id, id, principal.workspace.settings.byokModels)
  return model === undefined
    ? Either.left(new ModelNotFound({ model: id, modelsPath: modelsListPath(basePath, provider, region) }))
    : Either.right(model)
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
