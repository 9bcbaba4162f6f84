import { Data, type Effect } from "effect"

/** One budget in one of its periods, as the store keeps it. Amounts are whole nano-dollars. */
export interface BudgetLine {
  /** The budget's name in the store: `ws:<workspaceId>` or `key:<keyId>`. */
  readonly key: string
  /** Where its period starts and ends (epoch ms): spend is kept per period. */
  readonly periodStart: number
  readonly periodEnd: number
  /** The budget's amount. */
  readonly limitNano: number
}

/** What a reservation met: allowed on every line, or refused by the first line it did not fit. */
export type ReserveDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly refusedLine: number }

/** A line's spend in its period: settled costs, and what requests in progress hold (unexpired reservations). */
export interface LineUsage {
  readonly spentNano: number
  readonly reservedNano: number
}

/** A line's settled spend before and after a settlement: which alert thresholds it crossed. */
export interface SettledLine {
  readonly beforeNano: number
  readonly afterNano: number
}

/** The shared store (PostgreSQL, Redis) could not be asked: a budget that cannot be checked refuses. */
export class BudgetStoreFailure extends Data.TaggedError("BudgetStoreFailure")<{ readonly cause: unknown }> {}

/**
 * Spend and reservations per budget and period. `reserve` holds `amountNano` on every line or on none, in one
 * atomic decision across instances: it fits when settled spend + unexpired reservations + amount ≤ the amount.
 * A reservation lapses `ttlMs` after it was made (the store's clock), so a crash before `settle` frees it.
 * `settle` removes the reservation and adds the real cost to each line's period (also when the reservation had
 * lapsed: the money was spent).
 */
export interface BudgetStoreShape {
  readonly reserve: (
    reservationId: string,
    lines: ReadonlyArray<BudgetLine>,
    amountNano: number,
    ttlMs: number
  ) => Effect.Effect<ReserveDecision, BudgetStoreFailure>
  readonly settle: (
    reservationId: string,
    lines: ReadonlyArray<BudgetLine>,
    costNano: number
  ) => Effect.Effect<ReadonlyArray<SettledLine>, BudgetStoreFailure>
  readonly usage: (lines: ReadonlyArray<BudgetLine>) => Effect.Effect<ReadonlyArray<LineUsage>, BudgetStoreFailure>
}
