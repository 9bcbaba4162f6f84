/**
 * The ledger's columns hold integers of 32 bits for token counts and latency and numeric(18, 8)
 * for costs. Numbers from an upstream are untrusted: a fraction, a huge count, a negative or NaN
 * would make a record uninsertable (and, settled as is, lock a workspace out of its rate limits).
 * These are brought into range here, once, and the record says that it was (`clamped`).
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

/** A count: an integer in [0, maxInteger]. Fractions are rounded, NaN is 0, the rest is cut to the bounds. */
export const boundCount = (value: number): number =>
  Number.isNaN(value) ? 0 : Math.min(maxInteger, Math.max(0, Math.round(value)))

/** A cost in US dollars: finite, in [0, maxCostUsd]. */
export const boundCost = (value: number): number =>
  Number.isNaN(value) ? 0 : Math.min(maxCostUsd, Math.max(0, value))

/** Brings each named count into range, listing those that changed. */
export const boundCounts = <K extends string>(counts: Readonly<Record<K, number>>): Bounded<Record<K, number>> => {
  const value = {} as Record<K, number>
  const clamped: Array<ClampedField> = []
  for (const field of Object.keys(counts) as Array<K>) {
    const received = counts[field]
    const recorded = boundCount(received)
    value[field] = recorded
    if (!Object.is(recorded, received)) clamped.push({ field, received: String(received), recorded })
  }
  return { value, clamped }
}

/** The cost, in range, with the change listed when there was one. */
export const boundedCost = (costUsd: number): Bounded<number> => {
  const recorded = boundCost(costUsd)
  return { value: recorded, clamped: Object.is(recorded, costUsd) ? [] : [{ field: "costUsd", received: String(costUsd), recorded }] }
}

/** Most tokens a request of a model outside the catalog (own keys) is believed to use. */
export const unknownModelCeiling = 2_000_000

/**
 * Tokens to settle the rate limits with. A request cannot use more than its model's context (input
 * and output share it), unless it reserved more (embeddings of many inputs reserve their exact
 * count): an upstream reporting more would lock the workspace out for days.
 */
export const settledTokens = (used: number, reserved: number, contextLength: number | undefined): number =>
  Math.min(used, Math.max(reserved, contextLength ?? unknownModelCeiling))
