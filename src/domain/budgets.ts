// Spend caps of a workspace and of an API key (DESIGN.md, "Budgets, key expiry and webhooks"): their shape at
// the boundaries, their periods in the workspace's time zone, and dollars as whole nano-dollars in the stores
// (integers add exactly, on every backing alike).
import { Schema } from "effect"
import { DateTime } from "luxon"

export const BudgetPeriod = Schema.Literal("day", "week", "month").annotations({
  message: () => "period must be one of day, week, month"
})
export type BudgetPeriod = typeof BudgetPeriod.Type

const AmountUsd = Schema.Number.pipe(
  Schema.filter((amount) => Number.isFinite(amount) && amount > 0 && amount <= 1_000_000_000, {
    message: () => "amountUsd must be a number of US dollars above 0 and at most 1000000000"
  })
)

const Threshold = Schema.Number.pipe(
  Schema.filter((share) => Number.isFinite(share) && share > 0 && share <= 1, {
    message: () => "alertThresholds must be shares of the amount above 0 and at most 1, such as 0.8 or 1"
  })
)

export const Budget = Schema.Struct({
  amountUsd: AmountUsd,
  period: BudgetPeriod,
  /** Shares of the amount at which the workspace's webhooks are told (budget.threshold_reached). */
  alertThresholds: Schema.optional(Schema.Array(Threshold).pipe(Schema.maxItems(10)))
}).annotations({ identifier: "Budget" })
export type Budget = typeof Budget.Type

/** Whose budget: the workspace's, or one API key's. */
export type BudgetScope = "workspace" | "key"

/** One period of a budget: [start, end) in epoch milliseconds. */
export interface BudgetPeriodSpan {
  readonly start: number
  readonly end: number
}

/**
 * The period holding `now` in the workspace's time zone: days from midnight, weeks from Monday (ISO weeks,
 * luxon's), months from the 1st. A midnight skipped by a clock change starts at the first instant that exists.
 */
export const periodAt = (period: BudgetPeriod, timezone: string, now: number): BudgetPeriodSpan => {
  const start = DateTime.fromMillis(now, { zone: timezone }).startOf(period)
  return { start: start.toMillis(), end: start.plus({ [`${period}s`]: 1 }).startOf(period).toMillis() }
}

/** When the period ends, as the workspace reads it (ISO 8601 with its offset). */
export const resetText = (end: number, timezone: string): string =>
  DateTime.fromMillis(end, { zone: timezone }).toISO({ suppressMilliseconds: true }) ?? new Date(end).toISOString()

const nanosPerUsd = 1_000_000_000

/** Dollars as whole nano-dollars, rounded up: a reservation or a cost is never made smaller than it is. */
export const toNanoUsd = (usd: number): number => Math.max(0, Math.ceil(usd * nanosPerUsd - 1e-6))

export const fromNanoUsd = (nanos: number): number => nanos / nanosPerUsd

/** A budget's amount as text: `$12.50`. */
export const usdText = (usd: number): string => `$${usd.toFixed(usd < 1 ? 4 : 2)}`

/** A budget's alert threshold reached (DESIGN.md: the `data` of `budget.threshold_reached`). */
export interface BudgetThresholdReached {
  readonly workspaceId: string
  /** Null for the workspace's budget. */
  readonly keyId: string | null
  readonly budget: { readonly amountUsd: number; readonly period: BudgetPeriod; readonly periodStart: string }
  /** The share of the amount reached, as configured (0.8). */
  readonly threshold: number
  readonly spentUsd: number
}

/** The thresholds a settlement crossed: reached now, not before (each is crossed by exactly one settlement). */
export const crossedThresholds = (thresholds: ReadonlyArray<number>, amountUsd: number, beforeUsd: number, afterUsd: number) =>
  thresholds.filter((share) => beforeUsd < share * amountUsd && afterUsd >= share * amountUsd)
