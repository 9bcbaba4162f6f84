import { Effect, Either } from "effect"
import { type FormatErrors, problemAs } from "../api/errors/errorFormat"
import { CurrentPrincipal } from "../api/security"
import type { WorkspaceModel } from "../domain/models"
import type { Refusal } from "../domain/refusals"
import { listedModel, listedModels } from "../providers/modelsList"
import type { Provider } from "../providers/provider"
import { renderRefusal } from "../providers/render"

// The models list handlers of every provider: the caller's workspace, its models (src/providers/modelsList.ts),
// rendered in the provider's list format; refusals rendered by the provider's dialect, as the forwarded endpoints'.

const answer = <P extends Provider, A>(provider: P, result: Either.Either<A, Refusal>): Effect.Effect<A, FormatErrors[P["id"]]> =>
  Either.match(result, {
    onLeft: (refusal) => Effect.fail(problemAs<P["id"]>(provider.id, renderRefusal(provider, refusal).problem)),
    onRight: Effect.succeed
  })

/** `GET …/v1/models`: the whole list in the provider's format. */
export const listModelsOf = <P extends Provider, A>(provider: P, render: (models: ReadonlyArray<WorkspaceModel>) => A) =>
({ path }: { readonly path: { readonly region: string } }) =>
  Effect.flatMap(CurrentPrincipal, (principal) => answer(provider, Either.map(listedModels(provider, path.region, principal), render)))

/** `GET …/v1/models?…`: one page of the list, as the query asks (refused when its cursor is not in the list). */
export const pageModelsOf = <P extends Provider, A, Q>(
  provider: P,
  page: (models: ReadonlyArray<WorkspaceModel>, query: Q) => Either.Either<A, Refusal>
) =>
({ path, urlParams }: { readonly path: { readonly region: string }; readonly urlParams: Q }) =>
  Effect.flatMap(CurrentPrincipal, (principal) =>
    answer(provider, Either.flatMap(listedModels(provider, path.region, principal), (models) => page(models, urlParams))))

/** `GET …/v1/models/{model}`: one model the workspace may use, else 404 naming the list. */
export const retrieveModelOf = <P extends Provider, A>(provider: P, basePath: string, render: (model: WorkspaceModel) => A) =>
({ path }: { readonly path: { readonly region: string; readonly model: string } }) =>
  Effect.flatMap(CurrentPrincipal, (principal) =>
    answer(provider, Either.map(listedModel(provider, path.region, principal, path.model, basePath), render)))
