import { SqlClient } from "@effect/sql"
import { Context, Data, Effect, Layer } from "effect"
import { orStorageFailure } from "./orStorageFailure"
import type { StorageFailure } from "./Workspaces"

export type UsageGroupBy = "model" | "apiKey" | "family"

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

const checkRange = (range: LocalRange): Effect.Effect<void, InvalidUsageRange> => {
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

/**
 * The console's overview, read from the rollups of sql/0007_usage_rollups.sql (15-minute UTC
 * buckets, summed into the local days of any zone), never from the ledger: it stays fast however
 * large the ledger grows. Local midnights are resolved by PostgreSQL (`AT TIME ZONE`).
 */
export class UsageOverview extends Context.Tag("UsageOverview")<UsageOverview, {
  /** Forwarded API requests per local day and group. */
  readonly usage: (
    workspaceId: string,
    range: LocalRange,
    groupBy: UsageGroupBy
  ) => Effect.Effect<ReadonlyArray<UsageDayRow>, InvalidUsageRange | StorageFailure>
  /** Platform activity per local day: messages, distinct active users, tokens. */
  readonly activity: (workspaceId: string, range: LocalRange) => Effect.Effect<ReadonlyArray<ActivityDayRow>, InvalidUsageRange | StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    UsageOverview,
    Effect.map(SqlClient.SqlClient, (sql) => {
      const within = (workspaceId: string, { from, timezone, to }: LocalRange) =>
        sql`workspace_id = ${workspaceId}
            AND bucket >= (${from}::timestamp AT TIME ZONE ${timezone})
            AND bucket < (${to}::timestamp AT TIME ZONE ${timezone})`
      const day = (timezone: string) => sql`to_char(bucket AT TIME ZONE ${timezone}, 'YYYY-MM-DD')`
      type UsageSql = { day: string; grp: string; label: string | null; requests: number; input_tokens: number; output_tokens: number; cost_usd: number }
      return {
        usage: (workspaceId, range, groupBy) =>
          Effect.zipRight(
            checkRange(range),
            orStorageFailure(sql<UsageSql>`
              WITH days AS (
                SELECT ${day(range.timezone)} AS day,
                       ${groupBy === "model" ? sql`model` : groupBy === "family" ? sql`endpoint` : sql`key_id::text`} AS grp,
                       sum(requests)::float8 AS requests, sum(input_tokens)::float8 AS input_tokens,
                       sum(output_tokens)::float8 AS output_tokens, sum(cost_usd)::float8 AS cost_usd
                FROM usage_api_rollup WHERE ${within(workspaceId, range)}
                GROUP BY 1, 2
              )
              SELECT days.*, ${groupBy === "apiKey" ? sql`k.name` : sql`NULL::text`} AS label FROM days
              ${groupBy === "apiKey" ? sql`LEFT JOIN api_keys k ON k.id::text = days.grp` : sql``}
              ORDER BY day, grp`)
          ).pipe(Effect.map((rows) =>
            rows.map((row) => ({
              day: row.day,
              group: row.grp,
              ...(row.label === null ? {} : { label: row.label }),
              requests: row.requests,
              inputTokens: row.input_tokens,
              outputTokens: row.output_tokens,
              costUsd: Math.round(row.cost_usd * 1e6) / 1e6
            }))
          )),
        activity: (workspaceId, range) =>
          Effect.zipRight(
            checkRange(range),
            orStorageFailure(sql<{ day: string; messages: number; active_users: number | null; input_tokens: number; output_tokens: number }>`
              WITH messages AS (
                SELECT ${day(range.timezone)} AS day, sum(messages)::float8 AS messages,
                       sum(input_tokens)::float8 AS input_tokens, sum(output_tokens)::float8 AS output_tokens
                FROM usage_message_rollup WHERE ${within(workspaceId, range)} GROUP BY 1
              ), users AS (
                SELECT ${day(range.timezone)} AS day, count(DISTINCT user_ref)::int AS active_users
                FROM usage_active_users WHERE ${within(workspaceId, range)} GROUP BY 1
              )
              SELECT messages.*, users.active_users FROM messages LEFT JOIN users USING (day) ORDER BY day`)
          ).pipe(Effect.map((rows) =>
            rows.map((row) => ({
              day: row.day,
              messages: row.messages,
              activeUsers: row.active_users ?? 0,
              inputTokens: row.input_tokens,
              outputTokens: row.output_tokens
            }))
          ))
      }
    })
  )
}
