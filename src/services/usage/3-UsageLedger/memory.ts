import { Clock, Effect, Stream } from "effect"
import * as crypto from "node:crypto"
import { CSV_LINE_END } from "../../../domain/csv"
import { type ExportKind, exportLayouts } from "../../../domain/exportLayouts"
import type { ExportQueryInput } from "./exportQueries"
import { maxInteger } from "../../../domain/usageBounds"
import { encodeValueRows } from "../../exports/ExportService/valueRows"
import type { ApiRequestRow, UsageLedgerShape, ValueRow } from "./contract"
import { RequestsRefused } from "./contract"
import { type DimensionRow, splitBatch } from "./eventBatch"
import { memoryExportRows } from "./memoryExports"
import { type DimensionTable, type MemoryUsageStore, workspaceLedger } from "./memoryStore"

/** Rows per batch of an export read, as the database cursor fetches them. */
const BATCH_ROWS = 5000

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i

/**
 * What the api_requests columns refuse (sql/0002, 0004, 0006), with the SQLSTATE PostgreSQL gives:
 * not a uuid, not an integer (22P02), out of the column's type (22003), against a CHECK (23514).
 * Unknown workspaces (a foreign key in PostgreSQL) are not checked: this ledger knows none.
 */
const refusalOf = (row: ApiRequestRow): string | undefined => {
  for (const [column, value] of [["record_id", row.recordId], ["workspace_id", row.workspaceId], ["key_id", row.keyId]] as const) {
    if (!UUID.test(value)) return `22P02: invalid input syntax for type uuid: "${value}" (${column})`
  }
  const integers: ReadonlyArray<readonly [string, number, number, number]> = [
    // column, value, type bound, CHECK's lower bound
    ["status", row.status, 32_767, 100],
    ["input_tokens", row.inputTokens, maxInteger, 0],
    ["output_tokens", row.outputTokens, maxInteger, 0],
    ["latency_ms", Math.round(row.latencyMs), maxInteger, 0]
  ]
  for (const [column, value, bound, lowest] of integers) {
    if (!Number.isFinite(value)) return `23502: null value in column "${column}"`
    if (!Number.isInteger(value)) return `22P02: invalid input syntax for type integer: "${value}" (${column})`
    if (value > bound || value < -bound - 1) return `22003: value "${value}" is out of range for ${column}`
    if (value < lowest || (column === "status" && value > 599)) return `23514: ${column} ${value} violates its check constraint`
  }
  if (!Number.isFinite(row.costUsd)) return `23502: null value in column "cost_usd"`
  if (Math.abs(row.costUsd) >= 1e10) return `22003: numeric field overflow (cost_usd)`
  if (row.costUsd < 0) return `23514: cost_usd ${row.costUsd} violates its check constraint`
  return undefined
}

const FIELDS: { readonly [T in DimensionTable]: ReadonlyArray<string> } = {
  users: ["email", "name"],
  assistants: ["name"],
  projects: ["name"],
  workflows: ["name"]
}

const timeOf = (iso: string | null | undefined): number | null => (iso === null || iso === undefined ? null : Date.parse(iso))

/**
 * The ledger in this process's memory, over a store the caller may share (UsageOverview.memory reads
 * it). Every call is synchronous, so a batch is all or nothing, as a transaction is.
 */
export const makeMemoryLedger = (store: MemoryUsageStore): UsageLedgerShape => {
  /** An export's rows in batches, or none past `maxRows` (then `maxRows + 1`), as the database's read. */
  const readRows = (kind: ExportKind, input: ExportQueryInput, maxRows: number) => {
    const rows = memoryExportRows(store.workspaces.get(input.workspaceId), kind, input)
    if (rows.length > maxRows) return { total: maxRows + 1, rows: Stream.empty }
    const batches: Array<ReadonlyArray<ValueRow>> = []
    for (let i = 0; i < rows.length; i += BATCH_ROWS) batches.push(rows.slice(i, i + BATCH_ROWS))
    return { total: rows.length, rows: Stream.fromIterable(batches) }
  }

  /** The upsert of sql/0005: a field takes the batch's value when its event is at least as new as the stored one's. */
  const upsert = (workspaceId: string, table: DimensionTable, rows: ReadonlyArray<DimensionRow>) => {
    const dimension = workspaceLedger(store, workspaceId).dimensions[table]
    for (const row of rows) {
      const existing = dimension.get(row.external_id)
      if (existing === undefined) {
        const values: Record<string, string | null> = {}
        const at: Record<string, number | null> = {}
        for (const field of FIELDS[table]) {
          values[field] = row[field] ?? null
          at[field] = timeOf(row[`${field}_at`])
        }
        dimension.set(row.external_id, { ref: store.nextRef[table]++, externalId: row.external_id, values, at })
        continue
      }
      for (const field of FIELDS[table]) {
        const value = row[field] ?? null
        const valueAt = timeOf(row[`${field}_at`])
        const storedAt = existing.at[field] ?? null
        if (value !== null && valueAt !== null && (storedAt === null || valueAt >= storedAt)) {
          existing.values[field] = value
          existing.at[field] = valueAt
        }
      }
    }
  }

  const refOf = (workspaceId: string, table: DimensionTable, externalId: string | null): number | null =>
    externalId === null ? null : workspaceLedger(store, workspaceId).dimensions[table].get(externalId)?.ref ?? null

  return {
    ingest: (workspaceId, events) =>
      Effect.sync(() => {
        const batch = splitBatch(events)
        upsert(workspaceId, "users", batch.users)
        upsert(workspaceId, "assistants", batch.assistants)
        upsert(workspaceId, "projects", batch.projects)
        upsert(workspaceId, "workflows", batch.workflows)
        const ledger = workspaceLedger(store, workspaceId)
        let accepted = 0
        for (const m of batch.messages) {
          if (ledger.messages.has(m.event_id)) continue
          ledger.messages.set(m.event_id, {
            eventId: m.event_id,
            occurredAt: Date.parse(m.occurred_at),
            userRef: refOf(workspaceId, "users", m.user_id)!,
            assistantRef: refOf(workspaceId, "assistants", m.assistant_id),
            projectRef: refOf(workspaceId, "projects", m.project_id),
            model: m.model,
            inputTokens: m.input_tokens,
            outputTokens: m.output_tokens,
            feature: m.feature,
            conversationId: m.conversation_id
          })
          accepted++
        }
        for (const r of batch.runs) {
          if (ledger.runs.has(r.event_id)) continue
          ledger.runs.set(r.event_id, {
            eventId: r.event_id,
            startedAt: Date.parse(r.started_at),
            finishedAt: Date.parse(r.finished_at),
            workflowRef: refOf(workspaceId, "workflows", r.workflow_id)!,
            userRef: refOf(workspaceId, "users", r.user_id),
            projectRef: refOf(workspaceId, "projects", r.project_id),
            status: r.status
          })
          accepted++
        }
        return { accepted, duplicates: events.length - accepted }
      }),

    insertRequests: (rows) =>
      Effect.suspend(() => {
        for (const row of rows) {
          const reason = refusalOf(row)
          if (reason !== undefined) return Effect.fail(new RequestsRefused({ reason }))
        }
        for (const row of rows) {
          const ledger = workspaceLedger(store, row.workspaceId)
          if (!ledger.requests.has(row.recordId)) ledger.requests.set(row.recordId, row)
        }
        return Effect.void
      }),

    deadLetter: (row, line, reason) =>
      Effect.sync(() => {
        if (!store.deadLetters.has(row.recordId)) {
          store.deadLetters.set(row.recordId, { recordId: row.recordId, workspaceId: row.workspaceId, record: line, error: reason })
        }
      }),

    readExport: (kind, input, { maxRows }) => Effect.sync(() => readRows(kind, input, maxRows)),

    // The service's own encoder: the reference the database's CSV lines are held to.
    readExportCsv: (kind, input, { maxRows }) =>
      Effect.sync(() => {
        const { rows, total } = readRows(kind, input, maxRows)
        const layout = exportLayouts[kind]
        return { total, lines: Stream.map(rows, (batch) => batch.map((row) => encodeValueRows([row], layout).slice(0, -CSV_LINE_END.length))) }
      }),

    recordExportRun: (entry) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        store.exportRuns.push({ ...entry, id: crypto.randomUUID(), createdAt: new Date(now) })
      }),

    recentExportRuns: (workspaceId, limit) =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        store.exportRuns
          .filter((run) => run.workspaceId === workspaceId && run.linkExpiresAt.getTime() > now)
          .sort((a, b) =>
            b.linkExpiresAt.getTime() - a.linkExpiresAt.getTime() ||
            b.createdAt.getTime() - a.createdAt.getTime() ||
            (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .slice(0, limit))
  }
}
