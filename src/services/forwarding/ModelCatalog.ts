import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../config"
import { type ByokModels, type Catalog, catalogOf, type ModelInfo, type WorkspaceModel, workspaceModels } from "../../domain/models"
import type { ProviderId } from "../../domain/providerId"
import { catalogModels } from "../../domain/routesFile"

/**
 * The one catalog of the gateway (DESIGN "The operator's catalog"): the built-in models merged with the routes
 * file's `catalog` (added, replaced by id, or alone with `catalogMode: replace`). Every part reads models here —
 * the routes, the endpoints' checks and limits, the models lists, usage bounds, the console and the exports —
 * so that an operator's entry counts everywhere at once.
 */
export class ModelCatalog extends Context.Tag("ModelCatalog")<ModelCatalog, Catalog & {
  /** The models a workspace may call at a provider (its own list where it brings keys), before a route says which it serves. */
  readonly workspaceModels: (provider: ProviderId, byokModels?: ByokModels) => ReadonlyArray<WorkspaceModel>
}>() {
  /** The configuration's catalog: MODEL_CATALOG with the routes file's entries. */
  static readonly layer = Layer.effect(ModelCatalog, Effect.map(AppConfig, (config) => make(catalogModels(config.routes.catalog))))

  /** A catalog of exactly these entries (tests). */
  static readonly fixed = (models: ReadonlyArray<ModelInfo>) => Layer.succeed(ModelCatalog, make(models))
}

const make = (models: ReadonlyArray<ModelInfo>): ModelCatalog["Type"] => {
  const catalog = catalogOf(models)
  return { ...catalog, workspaceModels: (provider, byokModels) => workspaceModels(catalog, provider, byokModels) }
}
