import { Data, Effect } from "effect"
import type { StorageFailure } from "../../../platform/StorageFailure"

export type UsageGroupBy = "model" | "apiKey" | "family" | "byok"

/** The groups of groupBy=byok, and how they are named to people. */
export const keyKindLabels: Readonly<Record<string, string>> = {
  byok: "the workspace's own provider keys",
  managed: "the service's keys"
}

export interface UsageDayRow {
  readonly day: string
  readonly group: string
  readonly label?: string
  readonly requests: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly costUsd: number
}

export interface ActivityDayRow {
  readonly day: string
  readonly messages: number
  readonly activeUsers: number
  readonly inputTokens: number
  readonly outputTokens: number
}

export interface LocalRange {
  /** Local dates YYYY-MM-DD of `timezone`: from inclusive, to exclusive. */
  readonly from: string
  readonly to: string
  readonly timezone: string
}

/** The range is empty, reversed, not a date, or longer than the overview answers. */
export class InvalidUsageRange extends Data.TaggedError("InvalidUsageRange")<{ readonly field: string; readonly message: string }> {}

/** The longest range one overview call covers. */
export const maxOverviewDays = 400

export const checkRange = (range: LocalRange): Effect.Effect<void, InvalidUsageRange> => {
  const from = Date.parse(`${range.from}T00:00:00Z`)
  const to = Date.parse(`${range.to}T00:00:00Z`)
  if (Number.isNaN(from)) return Effect.fail(new InvalidUsageRange({ field: "from", message: "from must be a date YYYY-MM-DD" }))
  if (Number.isNaN(to)) return Effect.fail(new InvalidUsageRange({ field: "to", message: "to must be a date YYYY-MM-DD" }))
  if (to <= from) return Effect.fail(new InvalidUsageRange({ field: "to", message: "to must be after from (to is exclusive)" }))
  if ((to - from) / 86_400_000 > maxOverviewDays) {
    return Effect.fail(new InvalidUsageRange({ field: "to", message: `the range may cover at most ${maxOverviewDays} days` }))
  }
  return Effect.void
}

/** The console's usage charts: forwarded requests and platform activity per local day of a zone. */
export interface UsageOverviewShape {
  /** Forwarded API requests per local day and group. */
  readonly usage: (
    workspaceId: string,
    range: LocalRange,
    groupBy: UsageGroupBy
  ) => Effect.Effect<ReadonlyArray<UsageDayRow>, InvalidUsageRange | StorageFailure>
  /** Platform activity per local day: messages, distinct active users, tokens. */
  readonly activity: (workspaceId: string, range: LocalRange) => Effect.Effect<ReadonlyArray<ActivityDayRow>, InvalidUsageRange | StorageFailure>
}
