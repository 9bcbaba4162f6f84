import type { SqlClient, SqlError } from "@effect/sql"
import { Effect, Stream } from "effect"
import { exportCountStatement, exportCsvStatement, exportRowsStatement } from "./exportQueries"
import { StorageFailure } from "../../../platform/StorageFailure"
import {
  type ApiRequestRow,
  type ExportRun,
  RequestsRefused,
  type UsageLedgerShape,
  ZoneUnknownToStore
} from "./contract"
import { splitBatch } from "./eventBatch"
import { openExportRead } from "./snapshotCursor"

/** SQLSTATE classes of errors that belong to the data of a batch, not to the database being away. */
const dataErrorClasses = ["22", "23"]

const sqlState = (error: SqlError.SqlError): string | undefined => {
  const cause: unknown = error.cause
  return typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined
}

const isDataError = (error: SqlError.SqlError) => dataErrorClasses.includes(sqlState(error)?.slice(0, 2) ?? "")

/** `<SQLSTATE>: <message>`, bounded: what the dead-letter table and the logs keep of a refusal. */
export const errorText = (error: SqlError.SqlError): string => {
  const cause: unknown = error.cause
  const detail = cause instanceof Error ? cause.message : String(cause)
  return `${sqlState(error) ?? "?"}: ${detail}`.slice(0, 2_000)
}

/**
 * PostgreSQL's "time zone "…" not recognized" (SQLSTATE 22023) for the reporting zone: Node knows the
 * zone, the database's tz database does not (an older server, or a link ICU still has, such as
 * US/Pacific-New). The quoted name is matched, not the message text, which the server may translate.
 */
const isUnknownZone = (error: SqlError.SqlError, zone: string): boolean => {
  const cause = error.cause
  return typeof cause === "object" && cause !== null &&
    "code" in cause && cause.code === "22023" &&
    "message" in cause && typeof cause.message === "string" && cause.message.includes(`"${zone}"`)
}

const storageFailure = (cause: SqlError.SqlError) => new StorageFailure({ cause })

/** A batch of records as the JSON rows its insert reads (jsonb_to_recordset, by column name). */
export const apiRequestRowsJson = (batch: ReadonlyArray<ApiRequestRow>): string =>
  JSON.stringify(batch.map((r) => ({
    record_id: r.recordId,
    workspace_id: r.workspaceId,
    key_id: r.keyId,
    endpoint: r.endpoint,
    provider: r.provider,
    region: r.region,
    model: r.model,
    status: r.status,
    outcome: r.outcome,
    stream: r.stream,
    input_tokens: r.inputTokens,
    output_tokens: r.outputTokens,
    cost_usd: r.costUsd,
    clamped: r.clamped,
    latency_ms: Math.round(r.latencyMs),
    request_id: r.requestId ?? null,
    created_at: r.createdAt.toISOString(),
    byok: r.byok,
    deployment: r.deployment ?? null
  })))


/**
 * The ledger in PostgreSQL (sql/0002, 0004–0006, 0010, 0017). Ingestion is one transaction per batch:
 * dimensions upserted, then events inserted with ON CONFLICT DO NOTHING on (workspace_id, event_id).
 * Request rows are one INSERT per batch with ON CONFLICT on (workspace_id, record_id). The export
 * reads run the statements of exportQueries.ts on a snapshot-consistent cursor.
 */
export const makePostgresLedger = (sql: SqlClient.SqlClient): UsageLedgerShape => {
  const run = (text: string, params: ReadonlyArray<string>) => sql.unsafe<{ readonly inserted: number }>(text, params)

  const ingest: UsageLedgerShape["ingest"] = (workspaceId, events) => {
    const batch = splitBatch(events)
    const inserted = (rows: ReadonlyArray<{ readonly inserted: number }>) => rows[0]?.inserted ?? 0
    return sql.withTransaction(
      Effect.gen(function*() {
        // Always in this order, so concurrent batches lock dimension rows alike.
        if (batch.users.length > 0) yield* run(upsertUsers, [workspaceId, JSON.stringify(batch.users)])
        for (const [table, entities] of [
          ["workspace_assistants", batch.assistants],
          ["workspace_projects", batch.projects],
          ["workspace_workflows", batch.workflows]
        ] as const) {
          if (entities.length > 0) yield* run(upsertNamed(table), [workspaceId, JSON.stringify(entities)])
        }
        const messages = batch.messages.length === 0
          ? 0
          : inserted(yield* run(insertMessages, [workspaceId, JSON.stringify(batch.messages)]))
        const runs = batch.runs.length === 0
          ? 0
          : inserted(yield* run(insertRuns, [workspaceId, JSON.stringify(batch.runs)]))
        return { accepted: messages + runs, duplicates: events.length - messages - runs }
      })
    ).pipe(Effect.mapError(storageFailure))
  }

  const insertRequests: UsageLedgerShape["insertRequests"] = (batch) => {
    if (batch.length === 0) return Effect.void
    const rows = apiRequestRowsJson(batch)
    return sql`
      INSERT INTO api_requests (record_id, workspace_id, key_id, endpoint, provider, region, model, status, outcome,
                                stream, input_tokens, output_tokens, cost_usd, clamped, latency_ms, request_id,
                                created_at, byok, deployment)
      SELECT record_id, workspace_id, key_id, endpoint, provider, region, model, status, outcome, stream,
             input_tokens, output_tokens, cost_usd, clamped, latency_ms, request_id, created_at, byok, deployment
      FROM jsonb_to_recordset(${rows}::jsonb) AS r(
        record_id uuid, workspace_id uuid, key_id uuid, endpoint text, provider text, region text, model text,
        status smallint, outcome text, stream boolean, input_tokens integer, output_tokens integer,
        cost_usd numeric, clamped boolean, latency_ms integer, request_id text, created_at timestamptz, byok boolean,
        deployment text)
      ON CONFLICT (workspace_id, record_id) DO NOTHING`.pipe(
      Effect.asVoid,
      Effect.mapError((error) => isDataError(error) ? new RequestsRefused({ reason: errorText(error) }) : storageFailure(error))
    )
  }

  const deadLetter = (row: ApiRequestRow, line: string, reason: string) =>
    sql`
      INSERT INTO api_requests_dead_letter (record_id, workspace_id, record, error)
      VALUES (${row.recordId}::uuid, ${row.workspaceId}, ${line}, ${reason})
      ON CONFLICT (record_id) DO NOTHING`.pipe(Effect.asVoid, Effect.mapError(storageFailure))

  const readExport: UsageLedgerShape["readExport"] = (kind, input, { maxRows }) => {
    const failure = (error: SqlError.SqlError) =>
      isUnknownZone(error, input.zone) ? new ZoneUnknownToStore({ zone: input.zone }) : storageFailure(error)
    const statements = { rows: exportRowsStatement(kind, input), count: exportCountStatement(kind, input, maxRows) }
    return openExportRead(sql, statements, maxRows).pipe(
      Effect.map(({ rows, total }) => ({ total, rows: Stream.mapError(rows, failure) })),
      Effect.mapError(failure)
    )
  }

  const readExportCsv: UsageLedgerShape["readExportCsv"] = (kind, input, { maxRows }) => {
    const failure = (error: SqlError.SqlError) =>
      isUnknownZone(error, input.zone) ? new ZoneUnknownToStore({ zone: input.zone }) : storageFailure(error)
    const statements = { rows: exportCsvStatement(kind, input), count: exportCountStatement(kind, input, maxRows) }
    return openExportRead(sql, statements, maxRows).pipe(
      // One text column a row: the line.
      Effect.map(({ rows, total }) => ({ total, lines: rows.pipe(Stream.map((batch) => batch.map((row) => String(row[0]))), Stream.mapError(failure)) })),
      Effect.mapError(failure)
    )
  }

  const recordExportRun: UsageLedgerShape["recordExportRun"] = (entry) => {
    const label = "label" in entry.createdBy ? entry.createdBy.label : null
    const keyId = "keyId" in entry.createdBy ? entry.createdBy.keyId : null
    return sql`INSERT INTO export_runs
      (workspace_id, data_type, range_from, range_to, timezone, record_count, file_path, created_by, created_by_key, link_expires_at)
      VALUES (${entry.workspaceId}, ${entry.dataType}, ${entry.rangeFrom}, ${entry.rangeTo}, ${entry.timezone}, ${entry.recordCount},
              ${entry.filePath}, ${label}, ${keyId}, ${entry.linkExpiresAt})`.pipe(Effect.asVoid, Effect.mapError(storageFailure))
  }

  type RunRow = {
    id: string
    workspace_id: string
    data_type: ExportRun["dataType"]
    range_from: string
    range_to: string
    timezone: string
    record_count: number
    file_path: string
    created_by: string | null
    created_by_key: string | null
    created_at: Date
    link_expires_at: Date
  }
  const recentExportRuns: UsageLedgerShape["recentExportRuns"] = (workspaceId, limit) =>
    sql<RunRow>`SELECT id, workspace_id, data_type, range_from, range_to, timezone, record_count, file_path,
             created_by, created_by_key, created_at, link_expires_at
      FROM export_runs
      WHERE workspace_id = ${workspaceId} AND link_expires_at > now()
      ORDER BY link_expires_at DESC, created_at DESC, id LIMIT ${limit}`.pipe(
      Effect.map((rows) =>
        rows.map((row): ExportRun => ({
          id: row.id,
          workspaceId: row.workspace_id,
          dataType: row.data_type,
          rangeFrom: row.range_from,
          rangeTo: row.range_to,
          timezone: row.timezone,
          recordCount: row.record_count,
          filePath: row.file_path,
          createdBy: row.created_by_key === null ? { label: row.created_by ?? "" } : { keyId: row.created_by_key },
          createdAt: row.created_at,
          linkExpiresAt: row.link_expires_at
        }))
      ),
      Effect.mapError(storageFailure)
    )

  return { ingest, insertRequests, deadLetter, readExport, readExportCsv, recordExportRun, recentExportRuns }
}

// -------------------------------------------------------------------------------------------------
// SQL. $1 is the workspace id, $2 a JSON array. json (not jsonb): parsed once, never stored.

/**
 * A field's value replaces the stored one only if its event is at least as new as the event that
 * set the stored one: a field absent from the event keeps the stored value, and a retried or late
 * batch of older events changes nothing. A row is rewritten only when a newer event carries a field
 * (its time moves on even if the value is the same, so that an older value cannot come back later).
 */
const newer = (table: string, field: string) =>
  `EXCLUDED.${field} IS NOT NULL AND (${table}.${field}_at IS NULL OR EXCLUDED.${field}_at >= ${table}.${field}_at)`
const kept = (table: string, field: string) =>
  `${field} = CASE WHEN ${newer(table, field)} THEN EXCLUDED.${field} ELSE ${table}.${field} END,
      ${field}_at = CASE WHEN ${newer(table, field)} THEN EXCLUDED.${field}_at ELSE ${table}.${field}_at END`
const changes = (table: string, field: string) =>
  `(${newer(table, field)}) AND (${table}.${field}, ${table}.${field}_at) IS DISTINCT FROM (EXCLUDED.${field}, EXCLUDED.${field}_at)`

const upsertUsers = `INSERT INTO workspace_users (workspace_id, external_id, email, email_at, name, name_at)
SELECT $1::uuid, d.external_id, d.email, d.email_at, d.name, d.name_at
FROM json_to_recordset($2::json) AS d(external_id text, email text, email_at timestamptz, name text, name_at timestamptz)
ORDER BY d.external_id
ON CONFLICT (workspace_id, external_id) DO UPDATE
  SET ${kept("workspace_users", "email")},
      ${kept("workspace_users", "name")},
      updated_at = now()
  WHERE ${changes("workspace_users", "email")} OR ${changes("workspace_users", "name")}`

const upsertNamed = (table: "workspace_assistants" | "workspace_projects" | "workspace_workflows") =>
  `INSERT INTO ${table} (workspace_id, external_id, name, name_at)
SELECT $1::uuid, d.external_id, d.name, d.name_at
FROM json_to_recordset($2::json) AS d(external_id text, name text, name_at timestamptz)
ORDER BY d.external_id
ON CONFLICT (workspace_id, external_id) DO UPDATE
  SET ${kept(table, "name")}, updated_at = now()
  WHERE ${changes(table, "name")}`

// Ordered by event id, so two overlapping batches wait on each other instead of deadlocking.
const insertMessages = `WITH inserted AS (
  INSERT INTO message_events (workspace_id, occurred_at, user_ref, assistant_ref, project_ref, input_tokens,
                              output_tokens, event_id, model, feature, conversation_id)
  SELECT $1::uuid, e.occurred_at, u.id, a.id, p.id, e.input_tokens, e.output_tokens, e.event_id, e.model,
         e.feature, e.conversation_id
  FROM json_to_recordset($2::json) AS e(event_id text, occurred_at timestamptz, user_id text, assistant_id text,
                                        project_id text, model text, input_tokens integer, output_tokens integer,
                                        feature text, conversation_id text)
  JOIN workspace_users u ON u.workspace_id = $1::uuid AND u.external_id = e.user_id
  LEFT JOIN workspace_assistants a ON a.workspace_id = $1::uuid AND a.external_id = e.assistant_id
  LEFT JOIN workspace_projects p ON p.workspace_id = $1::uuid AND p.external_id = e.project_id
  ORDER BY e.event_id
  ON CONFLICT (workspace_id, event_id) DO NOTHING
  RETURNING 1
)
SELECT count(*)::integer AS inserted FROM inserted`

const insertRuns = `WITH inserted AS (
  INSERT INTO workflow_runs (workspace_id, started_at, finished_at, workflow_ref, user_ref, project_ref, event_id,
                             status)
  SELECT $1::uuid, e.started_at, e.finished_at, w.id, u.id, p.id, e.event_id, e.status
  FROM json_to_recordset($2::json) AS e(event_id text, started_at timestamptz, finished_at timestamptz,
                                        workflow_id text, user_id text, project_id text, status text)
  JOIN workspace_workflows w ON w.workspace_id = $1::uuid AND w.external_id = e.workflow_id
  LEFT JOIN workspace_users u ON u.workspace_id = $1::uuid AND u.external_id = e.user_id
  LEFT JOIN workspace_projects p ON p.workspace_id = $1::uuid AND p.external_id = e.project_id
  ORDER BY e.event_id
  ON CONFLICT (workspace_id, event_id) DO NOTHING
  RETURNING 1
)
SELECT count(*)::integer AS inserted FROM inserted`
