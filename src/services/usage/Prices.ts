import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../config"
import { costOf, type PriceTable, type TokenUsage } from "../../domain/prices"
import { ModelCatalog } from "../forwarding/ModelCatalog"

/**
 * The price table of PRICE_TABLE_FILE, read and checked with the configuration (see config.ts), with the prices of
 * the routes file's catalog over it: the operator's catalog entry of a model is where its price comes from.
 */
export class Prices extends Context.Tag("Prices")<Prices, {
  readonly table: PriceTable
  /** US dollars for the given usage of a model; 0 for a model the table does not list. */
  readonly cost: (model: string, usage: TokenUsage) => number
}>() {
  static readonly layer = Layer.effect(
    Prices,
    Effect.gen(function*() {
      const { priceTable, routes } = yield* AppConfig
      const table: PriceTable = {
        ...priceTable,
        models: { ...priceTable.models, ...Object.fromEntries(routes.catalog.models.map(({ info, pricesPerMillion }) => [info.id, pricesPerMillion])) }
      }
      const catalog = yield* ModelCatalog
      const unpriced = catalog.models.map((model) => model.id).filter((id) => table.models[id] === undefined)
      if (unpriced.length > 0) {
        yield* Effect.logWarning("models without a price cost 0").pipe(Effect.annotateLogs({ models: unpriced }))
      }
      return { table, cost: (model, usage) => costOf(table, model, usage) }
    })
  )

  static readonly fixed = (table: PriceTable) => Layer.succeed(Prices, { table, cost: (model, usage) => costOf(table, model, usage) })
}
