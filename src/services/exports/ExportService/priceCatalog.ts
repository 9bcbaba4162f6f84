import { Context, Effect, Layer } from "effect"
import type { CatalogPrice } from "../../usage/3-UsageLedger/exportQueries"
import { MODEL_CATALOG } from "../../../domain/models"
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
  /** The price table of PRICE_TABLE_FILE, the one forwarded requests are charged with. */
  static readonly fromPrices = Layer.effect(
    ExportPriceCatalog,
    Effect.map(Prices, ({ table }) => ({ prices: catalogFromPriceTable(table.models) }))
  )
}

/**
 * A price table (model → USD per million input and output tokens) as the exports' catalog; the
 * provider of each model comes from the model catalog, models it does not know get an empty provider.
 */
export const catalogFromPriceTable = (
  models: Readonly<Record<string, { readonly input: number; readonly output: number }>>
): ReadonlyArray<CatalogPrice> =>
  Object.entries(models).map(([model, price]) => ({
    model,
    provider: MODEL_CATALOG.find((info) => info.id === model)?.provider ?? "",
    inputUsdPerMillion: price.input,
    outputUsdPerMillion: price.output
  }))
