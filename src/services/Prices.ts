import { Context, Data, Effect, Layer, Schema } from "effect"
import * as fs from "node:fs"
import { AppConfig } from "../config"
import { MODEL_CATALOG } from "../domain/models"
import { costOf, PriceTable, type TokenUsage } from "../domain/prices"

export class PriceTableError extends Data.TaggedError("PriceTableError")<{ readonly message: string }> {}

/** The price table of PRICE_TABLE_FILE, loaded and checked once at start-up. */
export class Prices extends Context.Tag("Prices")<Prices, {
  readonly table: PriceTable
  /** US dollars for the given usage of a model; 0 for a model the table does not list. */
  readonly cost: (model: string, usage: TokenUsage) => number
}>() {
  static readonly layer = Layer.effect(
    Prices,
    Effect.gen(function*() {
      const { priceTableFile } = yield* AppConfig
      const text = yield* Effect.try({
        try: () => fs.readFileSync(priceTableFile, "utf8"),
        catch: () => new PriceTableError({ message: `PRICE_TABLE_FILE: cannot read ${priceTableFile}` })
      })
      const table = yield* Schema.decodeUnknown(Schema.parseJson(PriceTable))(text).pipe(
        Effect.mapError((error) => new PriceTableError({ message: `PRICE_TABLE_FILE ${priceTableFile}: ${error.message}` }))
      )
      const unpriced = MODEL_CATALOG.map((model) => model.id).filter((id) => table.models[id] === undefined)
      if (unpriced.length > 0) {
        yield* Effect.logWarning("models without a price cost 0").pipe(Effect.annotateLogs({ models: unpriced }))
      }
      return { table, cost: (model, usage) => costOf(table, model, usage) }
    })
  )

  static readonly fixed = (table: PriceTable) => Layer.succeed(Prices, { table, cost: (model, usage) => costOf(table, model, usage) })
}
