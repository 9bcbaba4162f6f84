import type { ModelFamily, WorkspaceModel } from "../../domain/models"
import type { Principal } from "../../domain/principal"
import type { ProviderId } from "../../domain/providerId"
import type { ModelCatalog } from "../forwarding/ModelCatalog"
import type { Route } from "../forwarding/Routes"

/**
 * Whether a workspace may call a model on a route: the catalog (or the workspace's own model list for the
 * provider) has it, and a deployment of the route serves it — a native one for a workspace with its own list,
 * since its own key goes to native deployments only.
 */
export const servedOnRoute = (route: Route, principal: Principal, provider: ProviderId, family: ModelFamily, model: string): boolean => {
  const ownModels = principal.workspace.settings.byokModels?.[provider]
  // The route knows the merged catalog (the built-in one and the routes file's) and which deployment serves what.
  return ownModels !== undefined ? ownModels.includes(model) && route.serves(model, true) : route.serves(model, false) && route.catalogEntry(model)?.family === family
}

/**
 * The models a workspace may call on a route, what its models list shows: those the catalog (or its own list)
 * gives it that a deployment of the route serves — the rule of servedOnRoute and of the catalog-only endpoints.
 */
export const modelsOnRoute = (route: Route, catalog: ModelCatalog["Type"], principal: Principal, provider: ProviderId): ReadonlyArray<WorkspaceModel> =>
  catalog.workspaceModels(provider, principal.workspace.settings.byokModels).filter((model) => route.serves(model.id, model.ownKey))
