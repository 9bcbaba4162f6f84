import type { UsageRow } from "../api/types"
import type { ChartSeries } from "../components/Chart"

type Measure = (row: UsageRow) => number

export const measures = {
  requests: (row: UsageRow) => row.requests,
  tokens: (row: UsageRow) => row.inputTokens + row.outputTokens,
  cost: (row: UsageRow) => row.costUsd
} satisfies Record<string, Measure>

/** At most this many groups get their own line; the rest are summed as "Other". */
const maxGroups = 6

/** One series per group (the busiest first), one value per day, zero on days without traffic. */
export const seriesOf = (rows: ReadonlyArray<UsageRow>, days: ReadonlyArray<string>, measure: Measure): Array<ChartSeries> => {
  // A key's rows are grouped by its id but named by its label (two keys may share a name).
  const names = new Map<string, string>()
  for (const row of rows) names.set(row.group, row.label ?? row.group)
  const totals = new Map<string, number>()
  for (const row of rows) totals.set(row.group, (totals.get(row.group) ?? 0) + measure(row))
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([group]) => group)
  const shown = ranked.length > maxGroups + 1 ? ranked.slice(0, maxGroups) : ranked
  const shownSet = new Set(shown)
  const labels = ranked.length > shown.length ? [...shown, "Other"] : shown
  const dayIndex = new Map(days.map((day, index) => [day, index]))
  const values = labels.map(() => days.map(() => 0))
  for (const row of rows) {
    const dayAt = dayIndex.get(row.day)
    const series = values[labels.indexOf(shownSet.has(row.group) ? row.group : "Other")]
    if (dayAt !== undefined && series !== undefined) series[dayAt] = (series[dayAt] ?? 0) + measure(row)
  }
  return labels.map((group, index) => ({ label: names.get(group) ?? group, values: values[index] ?? [] }))
}

export const total = (rows: ReadonlyArray<UsageRow>, measure: Measure): number => rows.reduce((sum, row) => sum + measure(row), 0)
