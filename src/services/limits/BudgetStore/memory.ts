import { Clock, Effect } from "effect"
import type { BudgetLine, BudgetStoreShape, LineUsage } from "./contract"

interface Period {
  spentNano: number
  /** Reservation id → its amount and when it lapses (epoch ms). */
  readonly held: Map<string, { readonly amountNano: number; readonly until: number }>
}

/** Budgets kept in this process: one instance only (tests, the in-memory harness). */
export const makeMemoryBudgetStore = (): BudgetStoreShape => {
  // Decisions are synchronous: no other request interleaves between reading and writing.
  const periods = new Map<string, Period>()
  const periodOf = (line: BudgetLine): Period => {
    const name = `${line.key}@${line.periodStart}`
    let found = periods.get(name)
    if (found === undefined) {
      found = { spentNano: 0, held: new Map() }
      periods.set(name, found)
    }
    return found
  }
  const usageOf = (period: Period, now: number): LineUsage => {
    let reservedNano = 0
    for (const [id, hold] of period.held) {
      if (hold.until <= now) period.held.delete(id)
      else reservedNano += hold.amountNano
    }
    return { spentNano: period.spentNano, reservedNano }
  }
  return {
    reserve: (reservationId, lines, amountNano, ttlMs) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const held = lines.map(periodOf)
        const refusedLine = held.findIndex((period, i) => {
          const { reservedNano, spentNano } = usageOf(period, now)
          return spentNano + reservedNano + amountNano > lines[i]!.limitNano
        })
        if (refusedLine >= 0) return { allowed: false, refusedLine }
        for (const period of held) period.held.set(reservationId, { amountNano, until: now + ttlMs })
        return { allowed: true }
      }),
    settle: (reservationId, lines, costNano) =>
      Effect.sync(() =>
        lines.map((line) => {
          const period = periodOf(line)
          period.held.delete(reservationId)
          const beforeNano = period.spentNano
          period.spentNano += costNano
          return { beforeNano, afterNano: period.spentNano }
        })
      ),
    usage: (lines) => Effect.map(Clock.currentTimeMillis, (now) => lines.map((line) => usageOf(periodOf(line), now)))
  }
}
