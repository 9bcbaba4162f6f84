import { isKnownModel, type ModelFamily } from "../../domain/models"
import type { Principal } from "../../domain/principal"
import type { ProviderId } from "../../domain/providerId"
import type { Route } from "../forwarding/Routes"

/**
 * Whether a workspace may call a model on a route: the catalog (or the workspace's own model list for the
 * provider) has it, and a deployment of the route serves it — a native one for a workspace with its own list,
 * since its own key goes to native deployments only.
 */
export const servedOnRoute = (route: Route, principal: Principal, provider: ProviderId, family: ModelFamily, model: string): boolean => {
  const ownModels = principal.workspace.settings.byokModels
  return isKnownModel(provider, family, model, ownModels) && route.serves(model, ownModels?.[provider] !== undefined)
}
