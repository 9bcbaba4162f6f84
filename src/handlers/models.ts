import { Effect, Either } from "effect"
import { type FormatErrors, problemAs } from "../api/errors/errorFormat"
import { CurrentPrincipal } from "../api/security"
import type { WorkspaceModel } from "../domain/models"
import type { Refusal, RegionNotServed } from "../domain/refusals"
import { listedModel, modelsListPath } from "../providers/modelsList"
import type { Provider } from "../providers/provider"
import { renderRefusal } from "../providers/render"
import { modelsOnRoute } from "../services/endpoints/servedOnRoute"
import { ModelCatalog } from "../services/forwarding/ModelCatalog"
import { Routes } from "../services/forwarding/Routes"

// The models list handlers of every provider: the caller's workspace, the models of the gateway's catalog (or its
// own list) that a deployment of the region's route serves, rendered in the provider's list format; refusals
// rendered by the provider's dialect, as the forwarded endpoints'.

const answer = <P extends Provider, A>(provider: P, result: Either.Either<A, Refusal>): Effect.Effect<A, FormatErrors[P["id"]]> =>
  Either.match(result, {
    onLeft: (refusal) => Effect.fail(problemAs<P["id"]>(provider.id, renderRefusal(provider, refusal).problem)),
    onRight: Effect.succeed
  })

/** The caller's models on the route of `region` (the same rule as the endpoints' acceptance), or why not. */
const modelsIn = (provider: Provider, region: string) =>
  Effect.map(
    Effect.all({ principal: CurrentPrincipal, routes: Routes, catalog: ModelCatalog }),
    ({ catalog, principal, routes }): Either.Either<ReadonlyArray<WorkspaceModel>, RegionNotServed> =>
      Either.map(routes.route(provider, region), (route) => modelsOnRoute(route, catalog, principal, provider.id))
  )

/** `GET …/v1/models`: the whole list in the provider's format. */
export const listModelsOf = <P extends Provider, A>(provider: P, render: (models: ReadonlyArray<WorkspaceModel>) => A) =>
({ path }: { readonly path: { readonly region: string } }) =>
  Effect.flatMap(modelsIn(provider, path.region), (models) => answer(provider, Either.map(models, render)))

/** `GET …/v1/models?…`: one page of the list, as the query asks (refused when its cursor is not in the list). */
export const pageModelsOf = <P extends Provider, A, Q>(
  provider: P,
  page: (models: ReadonlyArray<WorkspaceModel>, query: Q) => Either.Either<A, Refusal>
) =>
({ path, urlParams }: { readonly path: { readonly region: string }; readonly urlParams: Q }) =>
  Effect.flatMap(modelsIn(provider, path.region), (models) =>
    answer(provider, Either.flatMap(models, (list) => page(list, urlParams))))

/** `GET …/v1/models/{model}`: one model the workspace may use on the route, else 404 naming the list. */
export const retrieveModelOf = <P extends Provider, A>(provider: P, basePath: string, render: (model: WorkspaceModel) => A) =>
({ path }: { readonly path: { readonly region: string; readonly model: string } }) =>
  Effect.flatMap(modelsIn(provider, path.region), (models) =>
    answer(
      provider,
      Either.map(
        Either.flatMap(models, (list) => listedModel(list, path.model, modelsListPath(basePath, provider, path.region))),
        render
      )
    ))
