/**
 * The SQL of the five usage exports. The aggregation happens in PostgreSQL: each rows query returns
 * exactly the CSV rows of its layout (`exportLayouts`), in file order, with snake_case column names
 * equal to the layout's column names (run them WITHOUT result-name transforms). The same query in its
 * CSV form (`exportCsvStatement`) returns each row as its finished CSV line, encoded by PostgreSQL as
 * `domain/csv` encodes (sql/0017): what an export without privacy rules to apply writes as it is, so
 * that the service parses one text a row instead of every cell (a quarter of the CPU, measured). The
 * TypeScript side applies the privacy rules to the rows of the other exports and CSV-encodes them.
 *
 * Parameters (node-postgres `$n`, all passed as strings):
 *   $1 workspace id (uuid)   $2 from instant   $3 to instant   (ISO 8601, the range is [from, to))
 *   $4 reporting zone (IANA name, `AT TIME ZONE`)
 *   $5 model catalog (jsonb, projects and models rows queries only): see `catalogParam`
 *
 * Local days: an event belongs to `date_trunc('day', <time> AT TIME ZONE zone)`; the day's bounds are
 * that local midnight and the next one turned back into instants with the zone, so DST days last
 * 23 or 25 hours. The days are generated only over the span that actually has data in the range
 * (min/max of the time index), so a huge requested range costs nothing, and each day's
 * `period_start`/`period_end` strings are formatted once per day, not once per row.
 *
 * Order: by local day, then by the entity's surrogate key (the order the workspace first reported it),
 * which is the order the grouping already produces, so the wide output rows are never sorted; models
 * by source, model, provider, region, key (byok) and deployment.
 *
 * Costs: API traffic carries its recorded `cost_usd`. Platform messages carry no cost; they are priced
 * from the catalog parameter (USD per million input/output tokens); a model missing from the catalog
 * costs 0 and has an empty provider. Workflow runs have no cost.
 *
 * Each count query returns one row `{ row_count: number }`: the number of rows the rows query would
 * return, for the 1,000,000-row rule decided before any file is written, counted only as far as the
 * rule needs: a walk over the local days from the first to the last event in range, counting each
 * day's rows (one index range scan per day), that stops as soon as the sum passes `$5`, the limit.
 * So it is exact up to the limit and `limit + 1` beyond it, and refusing a range far over the limit
 * costs the days up to the limit, never a count of the whole range. It also reads the zone once, so
 * a zone this server does not know is an error (SQLSTATE 22023) even in a range without events.
 */
import { type ExportKind, exportLayouts } from "../../../domain/exportLayouts"

/** A catalog price: USD per million tokens. Models must be unique (otherwise an arbitrary one of the duplicates is used). */
export interface CatalogPrice {
  readonly model: string
  readonly provider: string
  readonly inputUsdPerMillion: number
  readonly outputUsdPerMillion: number
}

export interface ExportQueryInput {
  readonly workspaceId: string
  readonly from: Date
  readonly to: Date
  /** The reporting zone (`ResolvedDateRange.zone`). */
  readonly zone: string
  readonly catalog: ReadonlyArray<CatalogPrice>
}

export interface SqlStatement {
  readonly text: string
  readonly params: ReadonlyArray<string>
}

/** The `$5` parameter: the catalog as a JSON array with the column names the SQL reads. */
export const catalogParam = (catalog: ReadonlyArray<CatalogPrice>): string =>
  JSON.stringify(
    catalog.map((price) => ({
      model: price.model,
      provider: price.provider,
      input_usd_per_million: price.inputUsdPerMillion,
      output_usd_per_million: price.outputUsdPerMillion
    }))
  )

// ---------------------------------------------------------------------------------------------
// Fragments

const ZONE = "$4::text"
const FROM = "$2::timestamptz"
const TO = "$3::timestamptz"

interface TimeSource {
  readonly table: string
  readonly time: string
}

const MESSAGES: TimeSource = { table: "message_events", time: "occurred_at" }
const RUNS: TimeSource = { table: "workflow_runs", time: "started_at" }
const API: TimeSource = { table: "api_requests", time: "created_at" }

const inRange = (alias: string, source: TimeSource): string =>
  `${alias}.workspace_id = $1::uuid AND ${alias}.${source.time} >= ${FROM} AND ${alias}.${source.time} < ${TO}`

const localDay = (alias: string, source: TimeSource): string =>
  `date_trunc('day', ${alias}.${source.time} AT TIME ZONE ${ZONE})`

// One index probe per min()/max() (the planner's min/max optimisation on (workspace_id, time)).
const boundary = (aggregate: "min" | "max", source: TimeSource): string =>
  `(SELECT ${aggregate}(b.${source.time}) FROM ${source.table} b WHERE ${inRange("b", source)})`

/** `days(day, period_start, period_end)`: the local days from the first to the last event in range. */
const daysCte = (sources: ReadonlyArray<TimeSource>): string => {
  const first = sources.map((source) => boundary("min", source)).join(", ")
  const last = sources.map((source) => boundary("max", source)).join(", ")
  // MATERIALIZED: otherwise the planner pulls the formatting up and runs it once per output row.
  return `days AS MATERIALIZED (
  SELECT d AS day,
         usage_format_in_zone(greatest(d AT TIME ZONE ${ZONE}, ${FROM}), ${ZONE}) AS period_start,
         usage_format_in_zone(least((d + interval '1 day') AT TIME ZONE ${ZONE}, ${TO}), ${ZONE}) AS period_end
  FROM generate_series(date_trunc('day', least(${first}) AT TIME ZONE ${ZONE}),
                       date_trunc('day', greatest(${last}) AT TIME ZONE ${ZONE}),
                       interval '1 day') AS d
)`
}

const pricesCte = `prices AS (
  SELECT DISTINCT ON (model) model, provider, input_usd_per_million, output_usd_per_million
  FROM jsonb_to_recordset($5::jsonb)
       AS p(model text, provider text, input_usd_per_million numeric, output_usd_per_million numeric)
  ORDER BY model
)`

/** The local day the count's walk (below) counts next: a local midnight, as a timestamp without zone. */
const NEXT_DAY = "(w.day + interval '1 day')"

/**
 * Rows of `source` in range on the local day NEXT_DAY. The time bounds are the day's instants widened by
 * more than any offset change, for the index; the local day itself is then matched exactly, with the very
 * expression the rows query groups by.
 */
const onNextDay = (alias: string, source: TimeSource): string =>
  `${alias}.workspace_id = $1::uuid
    AND ${alias}.${source.time} >= greatest(${FROM}, (${NEXT_DAY} AT TIME ZONE ${ZONE}) - interval '3 hours')
    AND ${alias}.${source.time} < least(${TO}, ((${NEXT_DAY} + interval '1 day') AT TIME ZONE ${ZONE}) + interval '3 hours')
    AND ${localDay(alias, source)} = ${NEXT_DAY}`

/** `(SELECT count(*) …)` of the groups an inner query gives, as a scalar expression. */
const countRows = (groups: string): string => `(SELECT count(*) FROM (\n  ${groups}\n  ) AS day_rows)`

/**
 * The count query: walks the local days from the first to the last event in range (as the rows query's
 * `days` does), adding each day's rows (`dayRows`, an expression over NEXT_DAY), and stops at the first
 * day the sum passes $5 (the row limit). Returns the sum, or $5 + 1 for anything over the limit.
 */
const countOf = (sources: ReadonlyArray<TimeSource>, dayRows: string): string => {
  const first = sources.map((source) => boundary("min", source)).join(", ")
  const last = sources.map((source) => boundary("max", source)).join(", ")
  return `WITH RECURSIVE span AS (
  SELECT date_trunc('day', least(${first}) AT TIME ZONE ${ZONE}) AS first_day,
         date_trunc('day', greatest(${last}) AT TIME ZONE ${ZONE}) AS last_day
),
walk (day, total) AS (
  SELECT first_day - interval '1 day', 0::bigint FROM span WHERE first_day IS NOT NULL
  UNION ALL
  SELECT ${NEXT_DAY}, w.total + ${dayRows}
  FROM walk w, span
  WHERE w.day < span.last_day AND w.total <= $5::bigint
)
SELECT least(coalesce(max(total), 0), $5::bigint + 1)::integer AS row_count FROM walk`
}

// ---------------------------------------------------------------------------------------------
// users

const usersRows = (select: string) => `WITH ${daysCte([MESSAGES])},
g AS (
  SELECT ${localDay("e", MESSAGES)} AS day,
         e.user_ref,
         count(*) AS messages,
         count(DISTINCT e.conversation_id) AS conversations,
         count(DISTINCT e.assistant_ref) AS assistants_used,
         count(DISTINCT e.project_ref) AS projects_used,
         string_agg(DISTINCT e.feature COLLATE "C", ';' ORDER BY e.feature COLLATE "C") AS features_used,
         string_agg(DISTINCT e.model COLLATE "C", ';' ORDER BY e.model COLLATE "C") AS models_used,
         -- distinct local hours as a 24-bit mask: a plain aggregate, far cheaper than count(DISTINCT)
         bit_count(bit_or(1 << date_part('hour', e.occurred_at AT TIME ZONE ${ZONE})::integer)::bit(32))::integer
           AS active_hours,
         date_part('hour', min(e.occurred_at) AT TIME ZONE ${ZONE})::integer AS first_active_hour,
         date_part('hour', max(e.occurred_at) AT TIME ZONE ${ZONE})::integer AS last_active_hour,
         sum(e.input_tokens) AS input_tokens,
         sum(e.output_tokens) AS output_tokens
  FROM message_events e
  WHERE ${inRange("e", MESSAGES)}
  GROUP BY 1, 2
)
SELECT ${select}
FROM g
JOIN days ON days.day = g.day
JOIN workspace_users u ON u.id = g.user_ref
ORDER BY g.day, g.user_ref`

const usersColumns = [
  "days.period_start", "days.period_end", "u.external_id", "u.email", "u.name",
  "g.messages", "g.conversations", "g.assistants_used", "g.projects_used", "g.features_used", "g.models_used",
  "g.active_hours", "g.first_active_hour", "g.last_active_hour", "g.input_tokens", "g.output_tokens"
]

const usersCount = countOf(
  [MESSAGES],
  countRows(`SELECT 1 FROM message_events e WHERE ${onNextDay("e", MESSAGES)} GROUP BY e.user_ref`)
)

// ---------------------------------------------------------------------------------------------
// assistants

const assistantsRows = (select: string) => `WITH ${daysCte([MESSAGES])},
g AS (
  SELECT ${localDay("e", MESSAGES)} AS day,
         e.assistant_ref,
         count(*) AS messages,
         count(DISTINCT e.user_ref) AS active_users,
         count(DISTINCT e.conversation_id) AS conversations,
         sum(e.input_tokens) AS input_tokens,
         sum(e.output_tokens) AS output_tokens
  FROM message_events e
  WHERE ${inRange("e", MESSAGES)} AND e.assistant_ref IS NOT NULL
  GROUP BY 1, 2
)
SELECT ${select}
FROM g
JOIN days ON days.day = g.day
JOIN workspace_assistants a ON a.id = g.assistant_ref
ORDER BY g.day, g.assistant_ref`

const assistantsColumns = [
  "days.period_start", "days.period_end", "a.external_id", "a.name",
  "g.messages", "g.active_users", "g.conversations", "g.input_tokens", "g.output_tokens"
]

const assistantsCount = countOf(
  [MESSAGES],
  countRows(`SELECT 1 FROM message_events e
    WHERE ${onNextDay("e", MESSAGES)} AND e.assistant_ref IS NOT NULL
    GROUP BY e.assistant_ref`)
)

// ---------------------------------------------------------------------------------------------
// workflows (a run belongs to the local day it started)

const workflowsRows = (select: string) => `WITH ${daysCte([RUNS])},
runs AS (
  SELECT ${localDay("r", RUNS)} AS day,
         r.workflow_ref,
         r.user_ref,
         r.status,
         round(date_part('epoch', r.finished_at - r.started_at) * 1000)::bigint AS duration_ms
  FROM workflow_runs r
  WHERE ${inRange("r", RUNS)}
),
g AS (
  SELECT day,
         workflow_ref,
         count(*) AS executions,
         count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
         count(*) FILTER (WHERE status = 'failed') AS failed,
         round(count(*) FILTER (WHERE status = 'succeeded')::numeric / count(*), 4) AS success_rate,
         min(duration_ms) AS duration_min_ms,
         round(avg(duration_ms))::bigint AS duration_avg_ms,
         round(percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms::double precision))::bigint AS duration_p95_ms,
         max(duration_ms) AS duration_max_ms,
         count(DISTINCT user_ref) AS active_users
  FROM runs
  GROUP BY 1, 2
)
SELECT ${select}
FROM g
JOIN days ON days.day = g.day
JOIN workspace_workflows w ON w.id = g.workflow_ref
ORDER BY g.day, g.workflow_ref`

const workflowsColumns = [
  "days.period_start", "days.period_end", "w.external_id", "w.name",
  "g.executions", "g.succeeded", "g.failed", "g.success_rate",
  "g.duration_min_ms", "g.duration_avg_ms", "g.duration_p95_ms", "g.duration_max_ms", "g.active_users"
]

const workflowsCount = countOf(
  [RUNS],
  countRows(`SELECT 1 FROM workflow_runs r WHERE ${onNextDay("r", RUNS)} GROUP BY r.workflow_ref`)
)

// ---------------------------------------------------------------------------------------------
// projects (messages and workflow runs in a project)

const projectsRows = (select: string) => `WITH ${daysCte([MESSAGES, RUNS])},
${pricesCte},
activity AS (
  SELECT ${localDay("e", MESSAGES)} AS day,
         e.project_ref,
         e.user_ref,
         1 AS messages,
         0 AS workflow_runs,
         e.input_tokens,
         e.output_tokens,
         coalesce(e.input_tokens * p.input_usd_per_million + e.output_tokens * p.output_usd_per_million, 0)
           AS cost_usd_millionths
  FROM message_events e
  LEFT JOIN prices p ON p.model = e.model
  WHERE ${inRange("e", MESSAGES)} AND e.project_ref IS NOT NULL
  UNION ALL
  SELECT ${localDay("r", RUNS)}, r.project_ref, r.user_ref, 0, 1, 0, 0, 0
  FROM workflow_runs r
  WHERE ${inRange("r", RUNS)} AND r.project_ref IS NOT NULL
),
g AS (
  SELECT day,
         project_ref,
         sum(messages) AS messages,
         sum(workflow_runs) AS workflow_runs,
         count(DISTINCT user_ref) AS involved_users,
         sum(input_tokens) AS input_tokens,
         sum(output_tokens) AS output_tokens,
         round(sum(cost_usd_millionths) / 1000000, 6) AS cost_usd
  FROM activity
  GROUP BY 1, 2
)
SELECT ${select}
FROM g
JOIN days ON days.day = g.day
JOIN workspace_projects p ON p.id = g.project_ref
ORDER BY g.day, g.project_ref`

const projectsColumns = [
  "days.period_start", "days.period_end", "p.external_id", "p.name",
  "g.messages", "g.workflow_runs", "g.involved_users", "g.input_tokens", "g.output_tokens", "g.cost_usd"
]

const projectsCount = countOf(
  [MESSAGES, RUNS],
  countRows(`SELECT e.project_ref FROM message_events e
    WHERE ${onNextDay("e", MESSAGES)} AND e.project_ref IS NOT NULL
    UNION
    SELECT r.project_ref FROM workflow_runs r
    WHERE ${onNextDay("r", RUNS)} AND r.project_ref IS NOT NULL`)
)

// ---------------------------------------------------------------------------------------------
// models (platform messages priced from the catalog, plus forwarded API requests)

const modelsRows = (select: string) => `WITH ${daysCte([MESSAGES, API])},
${pricesCte},
platform_tokens AS (
  SELECT ${localDay("e", MESSAGES)} AS day,
         e.model,
         count(*) AS requests,
         sum(e.input_tokens) AS input_tokens,
         sum(e.output_tokens) AS output_tokens
  FROM message_events e
  WHERE ${inRange("e", MESSAGES)}
  GROUP BY 1, 2
),
g AS (
  SELECT t.day, 'platform' AS source, t.model, p.provider, NULL::text AS region,
         t.requests, 0::bigint AS failed_requests, t.input_tokens, t.output_tokens,
         round(coalesce(t.input_tokens * p.input_usd_per_million
                        + t.output_tokens * p.output_usd_per_million, 0) / 1000000, 6) AS cost_usd,
         NULL::bigint AS latency_avg_ms, NULL::text AS byok, NULL::bigint AS clamped,
         NULL::text AS deployment
  FROM platform_tokens t
  LEFT JOIN prices p ON p.model = t.model
  UNION ALL
  SELECT ${localDay("a", API)}, 'api', a.model, a.provider, a.region,
         -- A stream cut by an upstream failure was answered 200 but failed; a cancelled one (the client
         -- went away) did not fail.
         count(*), count(*) FILTER (WHERE a.status >= 400 OR a.outcome = 'failed'), sum(a.input_tokens), sum(a.output_tokens),
         round(sum(a.cost_usd), 6), round(avg(a.latency_ms))::bigint, a.byok::text,
         -- Requests whose reported usage was bounded (src/domain/usageBounds.ts).
         count(*) FILTER (WHERE a.clamped),
         -- The deployment that served them (NULL for requests recorded before sql/0018).
         a.deployment
  FROM api_requests a
  WHERE ${inRange("a", API)}
  GROUP BY 1, 3, 4, 5, a.byok, a.deployment
)
SELECT ${select}
FROM g
JOIN days ON days.day = g.day
ORDER BY g.day, g.source COLLATE "C", g.model COLLATE "C", g.provider COLLATE "C", g.region COLLATE "C", g.byok COLLATE "C",
         g.deployment COLLATE "C"`

const modelsColumns = [
  "days.period_start", "days.period_end", "g.source", "g.model", "g.provider", "g.region",
  "g.requests", "g.failed_requests", "g.input_tokens", "g.output_tokens", "g.cost_usd", "g.latency_avg_ms", "g.byok", "g.clamped",
  "g.deployment"
]

const modelsCount = countOf(
  [MESSAGES, API],
  `${countRows(`SELECT 1 FROM message_events e WHERE ${onNextDay("e", MESSAGES)} GROUP BY e.model`)}
    + ${countRows(`SELECT 1 FROM api_requests a WHERE ${onNextDay("a", API)} GROUP BY a.model, a.provider, a.region, a.byok, a.deployment`)}`
)

// ---------------------------------------------------------------------------------------------

interface ExportSql {
  /** The rows query with the given SELECT list. */
  readonly rows: (select: string) => string
  /** The expressions of the output columns, in the layout's column order. */
  readonly columns: ReadonlyArray<string>
  readonly count: string
  /** Whether the rows query reads the catalog parameter `$5`. */
  readonly rowsUseCatalog: boolean
}

const exportSql: { readonly [K in ExportKind]: ExportSql } = {
  users: { rows: usersRows, columns: usersColumns, count: usersCount, rowsUseCatalog: false },
  assistants: { rows: assistantsRows, columns: assistantsColumns, count: assistantsCount, rowsUseCatalog: false },
  workflows: { rows: workflowsRows, columns: workflowsColumns, count: workflowsCount, rowsUseCatalog: false },
  projects: { rows: projectsRows, columns: projectsColumns, count: projectsCount, rowsUseCatalog: true },
  models: { rows: modelsRows, columns: modelsColumns, count: modelsCount, rowsUseCatalog: true }
}

/** The SELECT list of the rows: each expression named as its layout column. */
const valuesSelect = (kind: ExportKind): string =>
  exportSql[kind].columns.map((expression, i) => `${expression} AS ${exportLayouts[kind].columns[i]!.name}`).join(",\n       ")

/**
 * The SELECT list of the CSV lines: one text column, `line`, the row's CSV line without its line end, its
 * cells encoded in PostgreSQL exactly as `domain/csv` encodes them (numbers as PostgreSQL prints them,
 * text and timestamps through `usage_csv_text`, sql/0017).
 */
const csvSelect = (kind: ExportKind): string =>
  exportLayouts[kind].columns
    .map((column, i) => {
      const expression = exportSql[kind].columns[i]!
      return column.kind === "integer" || column.kind === "decimal"
        ? `coalesce((${expression})::text, '')`
        : `usage_csv_text((${expression})::text)`
    })
    .join(" || ',' || ") + " AS line"

const rangeParams = (input: ExportQueryInput): ReadonlyArray<string> => [
  input.workspaceId,
  input.from.toISOString(),
  input.to.toISOString(),
  input.zone
]

const rowsParams = (kind: ExportKind, input: ExportQueryInput): ReadonlyArray<string> =>
  exportSql[kind].rowsUseCatalog ? [...rangeParams(input), catalogParam(input.catalog)] : rangeParams(input)

/** The rows query of an export with its parameters, ready for `sql.unsafe(text, params)`. */
export const exportRowsStatement = (kind: ExportKind, input: ExportQueryInput): SqlStatement => ({
  text: exportSql[kind].rows(valuesSelect(kind)),
  params: rowsParams(kind, input)
})

/**
 * The same rows as CSV lines (one text column `line` per row, in file order): what the export file holds,
 * made by PostgreSQL, so that the service only joins lines instead of parsing and encoding every cell.
 */
export const exportCsvStatement = (kind: ExportKind, input: ExportQueryInput): SqlStatement => ({
  text: exportSql[kind].rows(csvSelect(kind)),
  params: rowsParams(kind, input)
})

// A zone PostgreSQL does not know fails every export, not only those with events in range (the
// queries read the zone per event): a one-time filter, evaluated once before the count.
const ZONE_CHECK = `(now() AT TIME ZONE ${ZONE}) IS NOT NULL`

/** The count parameter's ceiling: the answer, `maxRows + 1` at most, must fit the `integer` it is read as. */
const MAX_COUNTED_ROWS = 2_147_483_646

/**
 * The count query of an export (one row, `row_count`), with its parameters ($1..$4, and $5 the row
 * limit): the exact number of rows up to `maxRows`, `maxRows + 1` for any number beyond it.
 */
export const exportCountStatement = (kind: ExportKind, input: ExportQueryInput, maxRows: number): SqlStatement => ({
  text: `SELECT row_count FROM (\n${exportSql[kind].count}\n) AS counted WHERE ${ZONE_CHECK}`,
  params: [...rangeParams(input), String(Math.min(Math.max(Math.floor(maxRows), 0), MAX_COUNTED_ROWS))]
})
