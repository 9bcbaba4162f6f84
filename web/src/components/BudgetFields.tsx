import type { Budget, BudgetPeriod, BudgetStatus } from "../api/types"
import { formatTime } from "../lib/dates"
import { formatUsd } from "../lib/format"
import { Field, Select } from "./Field"

/** A budget as its form holds it: the amount as typed (empty: no budget). */
export interface BudgetDraft {
  readonly amount: string
  readonly period: BudgetPeriod
}

const periodOptions: ReadonlyArray<{ readonly value: BudgetPeriod; readonly label: string }> = [
  { value: "day", label: "Per day" },
  { value: "week", label: "Per week (from Monday)" },
  { value: "month", label: "Per month (from the 1st)" }
]

export const draftOf = (budget: Budget | null): BudgetDraft => ({
  amount: budget === null ? "" : String(budget.amountUsd),
  period: budget?.period ?? "month"
})

/** The budget a draft says: null for none, undefined when the amount is not a positive number. */
export const budgetOf = (draft: BudgetDraft, kept?: Budget | null): Budget | null | undefined => {
  if (draft.amount.trim() === "") return null
  const amountUsd = Number(draft.amount)
  if (!Number.isFinite(amountUsd) || amountUsd <= 0) return undefined
  // Alert thresholds are set through the API: kept as they were.
  return { amountUsd, period: draft.period, ...(kept?.alertThresholds === undefined ? {} : { alertThresholds: kept.alertThresholds }) }
}

/** The amount and period of a budget; an empty amount means none. */
export const BudgetFields = ({ draft, onChange, legend, hint }: {
  readonly draft: BudgetDraft
  readonly onChange: (draft: BudgetDraft) => void
  readonly legend: string
  readonly hint: string
}) => (
  <fieldset>
    <legend>{legend}</legend>
    <Field
      label="Amount (US dollars)"
      value={draft.amount}
      inputMode="decimal"
      onInput={(amount) => onChange({ ...draft, amount })}
      hint={hint}
      error={budgetOf(draft) === undefined ? "A number of dollars above 0, or empty for no budget." : undefined}
    />
    <Select label="Period" value={draft.period} options={periodOptions} onChange={(period) => onChange({ ...draft, period })} />
  </fieldset>
)

/** "$50.00 per month". */
export const budgetText = (budget: Budget): string => `${formatUsd(budget.amountUsd)} per ${budget.period}`

/** The workspace's budget as a bar: spent, then held by requests in progress, against the amount. */
export const BudgetBar = ({ status }: { readonly status: BudgetStatus & { readonly budget: Budget } }) => {
  const amount = status.budget.amountUsd
  const spent = status.spentUsd ?? 0
  const reserved = status.reservedUsd ?? 0
  const share = (value: number) => `${Math.min(100, (value / amount) * 100).toFixed(1)}%`
  return (
    <div class="budget" role="group" aria-label="Workspace budget">
      <p>
        <strong>{formatUsd(spent)}</strong> spent of {budgetText(status.budget)}
        {reserved > 0 ? <>, {formatUsd(reserved)} reserved by requests in progress</> : null}
        {status.resetAt === null ? null : <>; resets {formatTime(status.resetAt)}</>}
      </p>
      <div
        class="budget-bar"
        role="meter"
        aria-label="Budget used"
        aria-valuemin={0}
        aria-valuemax={amount}
        aria-valuenow={Math.min(amount, spent + reserved)}
        aria-valuetext={`${formatUsd(spent)} spent and ${formatUsd(reserved)} reserved of ${formatUsd(amount)}`}
      >
        <span class="budget-spent" style={{ width: share(spent) }} />
        <span class="budget-reserved" style={{ width: share(Math.min(reserved, Math.max(0, amount - spent))) }} />
      </div>
      {status.spentUsd === null ? <p class="hint">What is spent cannot be read right now.</p> : null}
    </div>
  )
}
