import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { orStorageFailure } from "../../../platform/orStorageFailure"
import { checkRange, type LocalRange, type UsageOverviewShape, keyKindLabels } from "./contract"

/**
 * The console's overview, read from the rollups of sql/0008_usage_rollups.sql (15-minute UTC
 * buckets, summed into the local days of any zone) and the active-user counts of
 * sql/0009_active_user_days.sql, never from the ledger: it stays fast however large the ledger grows. Local midnights are resolved by PostgreSQL (`AT TIME ZONE`).
 */
export const makePostgresOverview = (sql: SqlClient.SqlClient): UsageOverviewShape => {
  const within = (workspaceId: string, { from, timezone, to }: LocalRange) =>
    sql`workspace_id = ${workspaceId}
        AND bucket >= (${from}::timestamp AT TIME ZONE ${timezone})
        AND bucket < (${to}::timestamp AT TIME ZONE ${timezone})`
  // Grouped by date, formatted after grouping: to_char once per day rather than once per bucket.
  const day = (timezone: string) => sql`(bucket AT TIME ZONE ${timezone})::date`
  /**
   * Whether every local midnight from `from` to `to` falls on a whole UTC hour: then the hourly
   * rollups (a quarter of the rows) sum to the same days; otherwise (India, Nepal, …) the quarter-hour ones.
   */
  const tables = ({ from, timezone, to }: LocalRange) =>
    sql<{ hourly: boolean }>`
      SELECT bool_and(date_trunc('hour', d::timestamp AT TIME ZONE ${timezone}, 'UTC') = (d::timestamp AT TIME ZONE ${timezone})) AS hourly
      FROM generate_series(${from}::date, ${to}::date, interval '1 day') AS d`.pipe(
      Effect.map((rows) =>
        rows[0]?.hourly === true
          ? { api: sql`usage_api_rollup_hourly`, messages: sql`usage_message_rollup_hourly` }
          : { api: sql`usage_api_rollup`, messages: sql`usage_message_rollup` }
      )
    )
  type UsageSql = { day: string; grp: string; label: string | null; requests: number; input_tokens: number; output_tokens: number; cost_usd: number }
  return {
    usage: (workspaceId, range, groupBy) =>
      Effect.zipRight(
        checkRange(range),
        orStorageFailure(Effect.flatMap(tables(range), (table) => sql<UsageSql>`
          WITH days AS (
            SELECT ${day(range.timezone)} AS day,
                   ${groupBy === "model"
                     ? sql`model`
                     : groupBy === "family"
                     ? sql`endpoint`
                     : groupBy === "byok"
                     ? sql`CASE WHEN byok THEN 'byok' ELSE 'managed' END`
                     : sql`key_id::text`} AS grp,
                   sum(requests)::float8 AS requests, sum(input_tokens)::float8 AS input_tokens,
                   sum(output_tokens)::float8 AS output_tokens, sum(cost_usd)::float8 AS cost_usd
            FROM ${table.api} WHERE ${within(workspaceId, range)}
            GROUP BY 1, 2
          )
          SELECT to_char(days.day, 'YYYY-MM-DD') AS day, grp, requests, input_tokens, output_tokens, cost_usd,
                 ${groupBy === "apiKey" ? sql`k.name` : sql`NULL::text`} AS label FROM days
          ${groupBy === "apiKey" ? sql`LEFT JOIN api_keys k ON k.id::text = days.grp` : sql``}
          ORDER BY days.day, grp`))
      ).pipe(Effect.map((rows) =>
        rows.map((row) => ({
          day: row.day,
          group: row.grp,
          ...(row.label !== null ? { label: row.label } : groupBy === "byok" ? { label: keyKindLabels[row.grp] ?? row.grp } : {}),
          requests: row.requests,
          inputTokens: row.input_tokens,
          outputTokens: row.output_tokens,
          costUsd: Math.round(row.cost_usd * 1e6) / 1e6
        }))
      )),
    activity: (workspaceId, range) =>
      Effect.zipRight(
        checkRange(range),
        orStorageFailure(Effect.flatMap(tables(range), (table) => sql<{ day: string; messages: number; active_users: number | null; input_tokens: number; output_tokens: number }>`
          WITH messages AS (
            SELECT ${day(range.timezone)} AS day, sum(messages)::float8 AS messages,
                   sum(input_tokens)::float8 AS input_tokens, sum(output_tokens)::float8 AS output_tokens
            FROM ${table.messages} WHERE ${within(workspaceId, range)} GROUP BY 1
          ),
          -- Each local date of the range: when it starts, and whether it lasts 24 hours from a
          -- quarter hour (then one count of sql/0009_active_user_days.sql is its active users).
          local_days AS MATERIALIZED (
            SELECT l::date AS day, (starts AT TIME ZONE 'UTC')::date AS utc_day,
                   extract(epoch FROM starts - ((starts AT TIME ZONE 'UTC')::date AT TIME ZONE 'UTC')) / 900 AS quarter,
                   extract(epoch FROM ends - starts) = 86400 AS whole
            FROM generate_series(${range.from}::date::timestamp, (${range.to}::date - 1)::timestamp, interval '1 day') AS l,
                 LATERAL (SELECT l AT TIME ZONE ${range.timezone} AS starts,
                                 (l + interval '1 day') AT TIME ZONE ${range.timezone} AS ends) AS s
          ),
          counted AS (
            SELECT l.day, coalesce(a.users[l.quarter::int + 1], 0) AS active_users
            FROM local_days l LEFT JOIN usage_active_user_days a ON a.workspace_id = ${workspaceId} AND a.day = l.utc_day
            WHERE l.whole AND l.quarter = floor(l.quarter)
          ),
          -- The other local days (DST changes): from the bitmaps. Each UTC day around them: the
          -- local date at its start, and how many of its quarter hours come before the next local
          -- midnight (those belong to that date, the rest to the next).
          utc_days AS MATERIALIZED (
            SELECT d::date AS day, start_local,
                   least(96, greatest(0, ceil(extract(epoch FROM ((start_local + 1)::timestamp AT TIME ZONE ${range.timezone})
                     - (d AT TIME ZONE 'UTC')) / 900)))::int AS early
            FROM generate_series((${range.from}::date - 1)::timestamp, ${range.to}::date::timestamp, interval '1 day') AS d,
                 LATERAL (SELECT ((d AT TIME ZONE 'UTC') AT TIME ZONE ${range.timezone})::date AS start_local) AS s
            WHERE EXISTS (SELECT 1 FROM local_days l WHERE l.day IN (start_local, start_local + 1) AND l.day NOT IN (SELECT day FROM counted))
          ),
          masks AS MATERIALIZED (
            SELECT day, start_local, (repeat('1', early) || repeat('0', 96 - early))::bit(96) AS early FROM utc_days
          ),
          -- A user's row of a UTC day counts for the local date of its early quarter hours and for the
          -- next one by its late quarter hours; a user seen in both parts of a local date counts once.
          parts AS (
            SELECT u.user_ref, m.start_local AS day FROM masks m JOIN usage_active_users u
              ON u.workspace_id = ${workspaceId} AND u.day = m.day
            WHERE bit_count(u.quarters & m.early) > 0
            UNION ALL
            SELECT u.user_ref, m.start_local + 1 FROM masks m JOIN usage_active_users u
              ON u.workspace_id = ${workspaceId} AND u.day = m.day
            WHERE bit_count(u.quarters & ~m.early) > 0
          ),
          users AS (
            SELECT day, active_users FROM counted
            UNION ALL
            SELECT day, count(DISTINCT user_ref)::int FROM parts
            WHERE day >= ${range.from}::date AND day < ${range.to}::date AND day NOT IN (SELECT day FROM counted)
            GROUP BY day
          )
          SELECT to_char(messages.day, 'YYYY-MM-DD') AS day, messages.messages, messages.input_tokens,
                 messages.output_tokens, users.active_users
          FROM messages LEFT JOIN users USING (day) ORDER BY messages.day`))
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
}
