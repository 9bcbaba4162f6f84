import { Context, Effect, Layer } from "effect"
import type { CatalogPrice } from "../../usage/3-UsageLedger/exportQueries"
import type { Catalog } from "../../../domain/models"
import { ModelCatalog } from "../../forwarding/ModelCatalog"
import { Prices } from "../../usage/Prices"

/**
 * The prices the projects and models exports put on platform messages (API traffic carries the cost
 * recorded with each request). A model missing here costs 0 and has an empty provider column.
 */
export class ExportPriceCatalog extends Context.Tag("ExportPriceCatalog")<ExportPriceCatalog, {
  readonly prices: ReadonlyArray<CatalogPrice>
}>() {
  static readonly empty = Layer.succeed(ExportPriceCatalog, { prices: [] })
  static readonly fixed = (prices: ReadonlyArray<CatalogPrice>) => Layer.succeed(ExportPriceCatalog, { prices })
  /**
   * The price table of PRICE_TABLE_FILE with the routes file's catalog prices over it (Prices), the one forwarded
   * requests are charged with; providers from the gateway's catalog.
   */
  static readonly fromPrices = Layer.effect(
    ExportPriceCatalog,
    Effect.map(Effect.all([Prices, ModelCatalog]), ([{ table }, catalog]) => ({ prices: catalogFromPriceTable(catalog, table.models) }))
  )
}

/**
 * A price table (model → USD per million input and output tokens) as the exports' catalog; the
 * provider of each model comes from the model catalog, models it does not know get an empty provider.
 */
export const catalogFromPriceTable = (
  catalog: Catalog,
  models: Readonly<Record<string, { readonly input: number; readonly output: number }>>
): ReadonlyArray<CatalogPrice> =>
  Object.entries(models).map(([model, price]) => ({
    model,
    provider: catalog.models.find((info) => info.id === model)?.provider ?? "",
    inputUsdPerMillion: price.input,
    outputUsdPerMillion: price.output
  }))
