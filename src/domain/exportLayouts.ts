/**
 * The CSV layouts of the five usage exports (layout version `v1`; the models export `v4`: `v2` added `byok`,
 * `v3` added `clamped`, `v4` added `deployment`).
 *
 * Every export has one row per entity per local day of the reporting zone (days cut at local midnight,
 * DST-aware: a day may last 23 or 25 hours). Only entity-days with activity have a row. Rows are
 * ordered by day, then by entity: users, assistants, workflows and projects in the order the workspace
 * first reported them (the ledger's surrogate key: no sort of the wide rows), models by source, model,
 * provider, region, key and deployment.
 * `period_start` / `period_end` are the day's bounds clipped to the requested range [from, to), written
 * as ISO 8601 with the zone's offset (`2026-01-05T00:00:00+01:00`).
 *
 * Versioning: the layout version is NOT written into the CSV (a comment line would break CSV readers
 * and a constant column would cost bytes on every row). It is part of the file name suffix
 * (`…-<from>-<to>-v1-<id>.csv`, see `exportFilePath`) and can be set as object metadata by the storage.
 * A new version may add columns at the end; renaming, removing or reordering columns needs a new version.
 */
import type { CsvColumn, CsvLayout } from "./csv"
import { providerIds } from "./providerId"

export const EXPORT_LAYOUT_VERSION = "v1"

export const EXPORT_KINDS = ["users", "assistants", "workflows", "projects", "models"] as const
export type ExportKind = (typeof EXPORT_KINDS)[number]

/** Which part of a user's identity a column holds; privacy rules blank or pseudonymise these columns. */
export type UserIdentity = "id" | "email" | "name"

export interface ExportColumn extends CsvColumn {
  readonly description: string
  /** Set on user-identifying columns only. */
  readonly identifies?: UserIdentity
}

export interface ExportLayout extends CsvLayout {
  readonly kind: ExportKind
  readonly version: string
  /** What one row is, for docs. */
  readonly rowGrain: string
  readonly columns: ReadonlyArray<ExportColumn>
}

const text = (name: string, description: string, identifies?: UserIdentity): ExportColumn =>
  identifies === undefined ? { name, kind: "text", description } : { name, kind: "text", description, identifies }
const integer = (name: string, description: string): ExportColumn => ({ name, kind: "integer", description })
const decimal = (name: string, description: string): ExportColumn => ({ name, kind: "decimal", description })
const timestamp = (name: string, description: string): ExportColumn => ({ name, kind: "timestamp", description })

const period: ReadonlyArray<ExportColumn> = [
  timestamp(
    "period_start",
    "Start of the row's local day (local midnight), or `from` when the range starts later that day; ISO 8601 with the zone's offset"
  ),
  timestamp(
    "period_end",
    "End of the row's local day (next local midnight, exclusive), or `to` when the range ends earlier; ISO 8601 with the zone's offset"
  )
]

const tokens: ReadonlyArray<ExportColumn> = [
  integer("input_tokens", "Sum of input (prompt) tokens"),
  integer("output_tokens", "Sum of output (completion) tokens")
]

const costUsd = decimal(
  "cost_usd",
  "Cost in US dollars, 6 decimals: API traffic as recorded per request; platform messages priced from the model catalog (0 for a model without a price)"
)

const users: ExportLayout = {
  kind: "users",
  version: EXPORT_LAYOUT_VERSION,
  rowGrain: "one row per user per local day with at least one platform message",
  columns: [
    ...period,
    text("user_id", "The user's id in the platform", "id"),
    text("user_email", "The user's email address, as last reported", "email"),
    text("user_name", "The user's display name, as last reported", "name"),
    integer("messages", "Messages sent"),
    integer("conversations", "Distinct conversations with messages (messages without a conversation id are not counted)"),
    integer("assistants_used", "Distinct assistants messaged"),
    integer("projects_used", "Distinct projects messaged in"),
    text("features_used", "Distinct features used, sorted, separated by `;`"),
    text("models_used", "Distinct models used, sorted, separated by `;`"),
    integer("active_hours", "Distinct local clock hours with at least one message (0–24)"),
    integer("first_active_hour", "Local clock hour (0–23) of the day's first message"),
    integer("last_active_hour", "Local clock hour (0–23) of the day's last message"),
    ...tokens
  ]
}

const assistants: ExportLayout = {
  kind: "assistants",
  version: EXPORT_LAYOUT_VERSION,
  rowGrain: "one row per assistant per local day with at least one message to it",
  columns: [
    ...period,
    text("assistant_id", "The assistant's id in the platform"),
    text("assistant_name", "The assistant's name, as last reported"),
    integer("messages", "Messages sent to the assistant"),
    integer("active_users", "Distinct users who messaged the assistant"),
    integer("conversations", "Distinct conversations with the assistant"),
    ...tokens
  ]
}

const workflows: ExportLayout = {
  kind: "workflows",
  version: EXPORT_LAYOUT_VERSION,
  rowGrain: "one row per workflow per local day with at least one run started",
  columns: [
    ...period,
    text("workflow_id", "The workflow's id in the platform"),
    text("workflow_name", "The workflow's name, as last reported"),
    integer("executions", "Runs started in the period"),
    integer("succeeded", "Runs that succeeded"),
    integer("failed", "Runs that failed"),
    decimal("success_rate", "succeeded / executions, between 0 and 1, 4 decimals"),
    integer("duration_min_ms", "Shortest run, milliseconds (finishedAt − startedAt)"),
    integer("duration_avg_ms", "Mean run duration, milliseconds, rounded"),
    integer("duration_p95_ms", "95th percentile of run durations (continuous), milliseconds, rounded"),
    integer("duration_max_ms", "Longest run, milliseconds"),
    integer("active_users", "Distinct users who started runs (runs without a user are not counted)")
  ]
}

const projects: ExportLayout = {
  kind: "projects",
  version: EXPORT_LAYOUT_VERSION,
  rowGrain: "one row per project per local day with at least one message or workflow run in it",
  columns: [
    ...period,
    text("project_id", "The project's id in the platform"),
    text("project_name", "The project's name, as last reported"),
    integer("messages", "Messages sent in the project"),
    integer("workflow_runs", "Workflow runs started in the project"),
    integer("involved_users", "Distinct users with a message or a workflow run in the project"),
    ...tokens,
    costUsd
  ]
}

/** "provider_a, provider_b or provider_c". */
const oneOfProviders = `${providerIds.slice(0, -1).join(", ")} or ${providerIds[providerIds.length - 1]}`

const models: ExportLayout = {
  kind: "models",
  // v2: `byok` added at the end; API traffic with the workspace's own provider key is its own row.
  // v3: `clamped` added at the end.
  // v4: `deployment` added at the end; API traffic of one model served by two deployments is two rows.
  version: "v4",
  rowGrain:
    "one row per model, provider, region, source, key (the workspace's own or the service's) and upstream deployment per local day with at least one request",
  columns: [
    ...period,
    text("source", "`platform` (messages ingested from the platform) or `api` (requests forwarded by this service)"),
    text("model", "Model id"),
    text("provider", `${oneOfProviders}; for platform messages from the model catalog (empty if unknown)`),
    text("region", "Region of the forwarded request (eu, us); empty for platform messages"),
    integer("requests", "Platform messages, or API requests including failed ones"),
    integer(
      "failed_requests",
      "API requests answered with an HTTP status of 400 or more, or streams that failed after a 200 (not those the client cancelled); 0 for platform messages"
    ),
    ...tokens,
    costUsd,
    integer("latency_avg_ms", "Mean latency of the API requests, milliseconds, rounded; empty for platform messages"),
    text(
      "byok",
      "`true` for API requests sent upstream with the workspace's own provider key, `false` for those sent with the service's key; empty for platform messages"
    ),
    integer(
      "clamped",
      "API requests whose usage, as the upstream reported it, was out of bounds and recorded bounded (input at most the model's context window, output at most the request's maximum output, negatives as 0); their tokens and cost are the bounded ones. 0 when none; empty for platform messages"
    ),
    text(
      "deployment",
      "Name of the upstream deployment that answered the API requests (its `name` in the routes, as in logs, metrics and /admin/upstreams; after a failover, the last one tried); empty for platform messages and for requests recorded before deployments were"
    )
  ]
}

export const exportLayouts: { readonly [K in ExportKind]: ExportLayout } = {
  users,
  assistants,
  workflows,
  projects,
  models
}

export const isExportKind = (value: string): value is ExportKind =>
  (EXPORT_KINDS as ReadonlyArray<string>).includes(value)

/** The columns that privacy rules blank or pseudonymise (only the users export has any). */
export const userIdentifyingColumns = (kind: ExportKind): ReadonlyArray<ExportColumn> =>
  exportLayouts[kind].columns.filter((column) => column.identifies !== undefined)

/**
 * `<kind>-usage/<workspace_id>/<kind>-usage-<from_date>-<to_date>-<version>-<id>.csv`, the spec's path
 * shape whose `<suffix>` is the layout version and a unique id. Dates are local `yyyyMMdd` of the
 * requested points (see `ResolvedDatePoint.fileDate`), e.g. `users-usage-20260105-20260112-v1-k3j9x.csv`.
 */
export const exportFilePath = (args: {
  readonly kind: ExportKind
  readonly workspaceId: string
  readonly fromDate: string
  readonly toDate: string
  readonly uniqueId: string
}): string =>
  `${args.kind}-usage/${args.workspaceId}/${args.kind}-usage-${args.fromDate}-${args.toDate}-${exportLayouts[args.kind].version}-${args.uniqueId}.csv`

const markdownCell = (value: string): string => value.replace(/\|/g, "\\|").replace(/\r?\n/g, " ")

/**
 * The layout as a Markdown table for the README and the OpenAPI descriptions: a sentence on the row
 * grain, then one line per column in file order.
 */
export const layoutMarkdown = (kind: ExportKind): string => {
  const layout = exportLayouts[kind]
  const lines = [
    `CSV layout ${layout.version} of the ${kind} export: ${layout.rowGrain}, ordered by day. ` +
      "Days are local days of the requested zone (`from.timezone`), cut at local midnight. " +
      "RFC 4180, UTF-8, CRLF line ends, header line first.",
    "",
    "| # | Column | Type | Description | User-identifying |",
    "|---|---|---|---|---|"
  ]
  layout.columns.forEach((column, index) => {
    const identifying = column.identifies === undefined ? "" : "yes"
    lines.push(
      `| ${index + 1} | \`${column.name}\` | ${column.kind} | ${markdownCell(column.description)} | ${identifying} |`
    )
  })
  return lines.join("\n")
}
