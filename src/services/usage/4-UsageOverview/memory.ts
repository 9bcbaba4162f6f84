import { Effect } from "effect"
import { DateTime } from "luxon"
import type { StorageFailure } from "../../../platform/StorageFailure"
import { fixed, scaled } from "../3-UsageLedger/decimal"
import { pgLocalMidnight } from "../3-UsageLedger/localTime"
import type { MemoryUsageStore } from "../3-UsageLedger/memoryStore"
import { type ActivityDayRow, checkRange, type LocalRange, type UsageDayRow, type UsageOverviewShape, keyKindLabels } from "./contract"

const QUARTER_MS = 900_000
const HOUR_MS = 3_600_000

/** The local dates from `from` to `to`, both included (`generate_series(from, to, '1 day')`). */
const datesOf = (range: LocalRange): Array<string> => {
  const dates: Array<string> = []
  for (let t = Date.parse(`${range.from}T00:00:00Z`); t <= Date.parse(`${range.to}T00:00:00Z`); t += 86_400_000) {
    dates.push(new Date(t).toISOString().slice(0, 10))
  }
  return dates
}

/**
 * The buckets of sql/0008 as the overview reads them: hourly when every local midnight of the range
 * is on a whole UTC hour, quarter hours otherwise; a bucket counts for the range when it starts
 * within [from midnight, to midnight), and for the local date it starts on.
 */
const bucketing = (range: LocalRange) => {
  const start = pgLocalMidnight(range.from, range.timezone)
  const end = pgLocalMidnight(range.to, range.timezone)
  const hourly = datesOf(range).every((date) => pgLocalMidnight(date, range.timezone) % HOUR_MS === 0)
  const localDate = (bucket: number) => DateTime.fromMillis(bucket, { zone: range.timezone }).toFormat("yyyy-MM-dd")
  const place = (instant: number, size: number): string | undefined => {
    const bucket = Math.floor(instant / size) * size
    return bucket >= start && bucket < end ? localDate(bucket) : undefined
  }
  return {
    /** The local date of the instant's rollup bucket, or undefined outside the range. */
    dayOf: (instant: number) => place(instant, hourly ? HOUR_MS : QUARTER_MS),
    /** The same for the active users' quarter-hour bitmaps. */
    quarterDayOf: (instant: number) => place(instant, QUARTER_MS)
  }
}


/** Day first, then group: the rollup query's `ORDER BY day, grp` (plain code unit order of the group). */
const byDayAndGroup = (a: UsageDayRow, b: UsageDayRow) =>
  a.day < b.day ? -1 : a.day > b.day ? 1 : a.group < b.group ? -1 : a.group > b.group ? 1 : 0

/**
 * The overview over the in-memory ledger's state: the same days, groups and sums as the rollup
 * tables give, computed from the stored rows at each call (tests and the in-memory app).
 */
export const makeMemoryOverview = (
  store: MemoryUsageStore,
  keyNames: (workspaceId: string) => Effect.Effect<ReadonlyMap<string, string>, StorageFailure>
): UsageOverviewShape => ({
  usage: (workspaceId, range, groupBy) =>
    Effect.zipRight(
      checkRange(range),
      Effect.flatMap(groupBy === "apiKey" ? keyNames(workspaceId) : Effect.succeed(new Map<string, string>()), (names) =>
        Effect.sync(() => {
          const { dayOf } = bucketing(range)
          const sums = new Map<string, { day: string; group: string; requests: number; inputTokens: number; outputTokens: number; cost: bigint }>()
          for (const request of store.workspaces.get(workspaceId)?.requests.values() ?? []) {
            const day = dayOf(request.createdAt.getTime())
            if (day === undefined) continue
            const group = groupBy === "model"
              ? request.model
              : groupBy === "family"
              ? request.endpoint
              : groupBy === "byok"
              ? (request.byok ? "byok" : "managed")
              : request.keyId
            const id = `${day} ${group}`
            const sum = sums.get(id) ?? { day, group, requests: 0, inputTokens: 0, outputTokens: 0, cost: 0n }
            sum.requests++
            sum.inputTokens += request.inputTokens
            sum.outputTokens += request.outputTokens
            // Each cost as numeric(18, 8) keeps it, summed exactly.
            sum.cost += scaled(request.costUsd, 8)
            sums.set(id, sum)
          }
          return [...sums.values()].map(({ cost, group, ...sum }): UsageDayRow => {
            const label = groupBy === "apiKey" ? names.get(group) : groupBy === "byok" ? keyKindLabels[group] : undefined
            return {
              ...sum,
              group,
              ...(label === undefined ? {} : { label }),
              // As `sum(cost_usd)::float8`, then to the millionth as the SQL-backed overview does.
              costUsd: Math.round(Number.parseFloat(fixed(cost, 8)) * 1e6) / 1e6
            }
          }).sort(byDayAndGroup)
        }))
    ),
  activity: (workspaceId, range) =>
    Effect.zipRight(
      checkRange(range),
      Effect.sync(() => {
        const { dayOf, quarterDayOf } = bucketing(range)
        const days = new Map<string, { messages: number; inputTokens: number; outputTokens: number }>()
        const users = new Map<string, Set<number>>()
        for (const message of store.workspaces.get(workspaceId)?.messages.values() ?? []) {
          const day = dayOf(message.occurredAt)
          if (day !== undefined) {
            const sum = days.get(day) ?? { messages: 0, inputTokens: 0, outputTokens: 0 }
            sum.messages++
            sum.inputTokens += message.inputTokens
            sum.outputTokens += message.outputTokens
            days.set(day, sum)
          }
          const userDay = quarterDayOf(message.occurredAt)
          if (userDay !== undefined) users.set(userDay, (users.get(userDay) ?? new Set()).add(message.userRef))
        }
        return [...days.entries()]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([day, sum]): ActivityDayRow => ({ day, ...sum, activeUsers: users.get(day)?.size ?? 0 }))
      })
    )
})
