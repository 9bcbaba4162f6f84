import { Schema } from "effect"

const UsdPerMillion = Schema.Number.pipe(Schema.nonNegative({ message: () => "a price must be a number ≥ 0" }))

/** The price table settings file: US dollars per one million input and output tokens, per model. */
export const PriceTable = Schema.Struct({
  description: Schema.optional(Schema.String),
  models: Schema.Record({
    key: Schema.String,
    value: Schema.Struct({ input: UsdPerMillion, output: UsdPerMillion })
  })
})
export type PriceTable = typeof PriceTable.Type

export interface TokenUsage {
  readonly inputTokens: number
  readonly outputTokens: number
}

/** Cost in US dollars; a model missing from the table costs 0 (and is worth a warning where it is loaded). */
export const costOf = (table: PriceTable, model: string, usage: TokenUsage): number => {
  const price = table.models[model]
  if (price === undefined) return 0
  return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1_000_000
}
