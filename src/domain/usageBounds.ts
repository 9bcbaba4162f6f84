/**
 * Usage an upstream reports is untrusted input (DESIGN.md, "Usage bounds"). It is bounded by what the request
 * could have consumed — input tokens by its model's context window, output tokens by the request's maximum
 * output (max_tokens, else the model's output limit) — and by the ledger's columns (integers of 32 bits for
 * token counts, numeric(18, 8) for costs): a fraction is rounded, a negative or NaN is 0, a huge or infinite
 * count is the ceiling. This happens here, once, before the usage is recorded, billed or settled against the
 * limits, and the record says that it did (`clamped`, in the ledger and the models export).
 */

/** Largest value of a PostgreSQL integer column. */
export const maxInteger = 2_147_483_647

/** Largest cost kept: numeric(18, 8) holds less than 10^10, and a double near it is not exact. */
export const maxCostUsd = 9_999_999_999

/** One value that had to be changed, for the log line. */
export interface ClampedField {
  readonly field: string
  /** The value as it came, as text (NaN and Infinity have no JSON form). */
  readonly received: string
  readonly recorded: number
}

export interface Bounded<A> {
  readonly value: A
  readonly clamped: ReadonlyArray<ClampedField>
}

/** A count: an integer in [0, ceiling] (at most maxInteger). Fractions are rounded, NaN is 0, the rest is cut to the bounds. */
export const boundCount = (value: number, ceiling = maxInteger): number =>
  Number.isNaN(value) ? 0 : Math.min(maxInteger, Math.max(0, Math.floor(ceiling)), Math.max(0, Math.round(value)))

/** A cost in US dollars: finite, in [0, maxCostUsd]. */
export const boundCost = (value: number): number =>
  Number.isNaN(value) ? 0 : Math.min(maxCostUsd, Math.max(0, value))

/** Brings each named count into range (below its ceiling when it has one), listing those that changed. */
export const boundCounts = <K extends string>(
  counts: Readonly<Record<K, number>>,
  ceilings: Partial<Readonly<Record<K, number>>> = {}
): Bounded<Record<K, number>> => {
  const value = {} as Record<K, number>
  const clamped: Array<ClampedField> = []
  for (const field of Object.keys(counts) as Array<K>) {
    const received = counts[field]
    const recorded = boundCount(received, ceilings[field])
    value[field] = recorded
    if (!Object.is(recorded, received)) clamped.push({ field, received: String(received), recorded })
  }
  return { value, clamped }
}

/** Nothing changed: shared, as it is the answer for nearly every request. */
const noneClamped: ReadonlyArray<ClampedField> = Object.freeze([])

/** The cost, in range, with the change listed when there was one. */
export const boundedCost = (costUsd: number): Bounded<number> => {
  const recorded = boundCost(costUsd)
  return { value: recorded, clamped: Object.is(recorded, costUsd) ? noneClamped : [{ field: "costUsd", received: String(costUsd), recorded }] }
}

/** Most tokens a request of a model outside the catalog (own keys) is believed to use. */
export const unknownModelCeiling = 2_000_000

/** What one request could consume at most: the tokens it may read and those it may write. */
export interface UsageCeiling {
  readonly inputTokens: number
  readonly outputTokens: number
}

/**
 * The ceiling of a request to `model` (its catalog entry; undefined outside the catalog) that asked for at most
 * `maxOutput` tokens (undefined when it did not say): the model's context window for input; the request's own
 * maximum for output, else the model's output limit, else its context (input and output share it).
 */
export const usageCeiling = (
  model: { readonly contextLength: number; readonly maxOutputTokens: number | undefined } | undefined,
  maxOutput: number | undefined
): UsageCeiling => ({
  inputTokens: model?.contextLength ?? unknownModelCeiling,
  outputTokens: maxOutput ?? model?.maxOutputTokens ?? model?.contextLength ?? unknownModelCeiling
})

/** Reported usage within what the request could consume (and the columns' range), with what had to change. */
export const boundUsage = (
  usage: { readonly inputTokens: number; readonly outputTokens: number },
  ceiling: UsageCeiling
): Bounded<{ inputTokens: number; outputTokens: number }> => {
  // Once a request: the two counts bounded in place (no list of names, no list of changes) when both are in range.
  const inputTokens = boundCount(usage.inputTokens, ceiling.inputTokens)
  const outputTokens = boundCount(usage.outputTokens, ceiling.outputTokens)
  return Object.is(inputTokens, usage.inputTokens) && Object.is(outputTokens, usage.outputTokens)
    ? { value: { inputTokens, outputTokens }, clamped: noneClamped }
    : boundCounts({ inputTokens: usage.inputTokens, outputTokens: usage.outputTokens }, ceiling)
}

/**
 * Tokens to settle the rate limits with. A request cannot use more than its model's context (input
 * and output share it), unless it reserved more (embeddings of many inputs reserve their exact
 * count): an upstream reporting more would lock the workspace out for days.
 */
export const settledTokens = (used: number, reserved: number, contextLength: number | undefined): number =>
  Math.min(used, Math.max(reserved, contextLength ?? unknownModelCeiling))
