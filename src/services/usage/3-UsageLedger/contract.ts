import { Data, type Effect, type Scope, type Stream } from "effect"
import type { UsageEvent } from "../../../domain/usageEvent"
import type { ExportKind } from "../../../domain/exportLayouts"
import type { ExportQueryInput } from "./exportQueries"
import type { StorageFailure } from "../../../platform/StorageFailure"

/** What a batch did: events newly stored, and events whose id the workspace had already sent. */
export interface IngestResult {
  readonly accepted: number
  readonly duplicates: number
}

/**
 * One forwarded request as the ledger stores it. Endpoint and provider are plain text here: the
 * ledger keeps what it is given (the recorder's record narrows them).
 */
export interface ApiRequestRow {
  /** The service's own id of the record: the idempotency key, with the workspace. */
  readonly recordId: string
  readonly workspaceId: string
  readonly keyId: string
  readonly endpoint: string
  readonly provider: string
  readonly region: string
  readonly model: string
  readonly status: number
  readonly outcome: "completed" | "failed" | "cancelled"
  readonly stream: boolean
  readonly inputTokens: number
  readonly outputTokens: number
  readonly costUsd: number
  readonly clamped: boolean
  readonly latencyMs: number
  readonly requestId: string | undefined
  readonly createdAt: Date
  /** It went upstream with the workspace's own provider key. */
  readonly byok: boolean
  /**
   * The name of the upstream deployment that answered (or that the last attempt went to); undefined only for
   * records made before deployments were recorded.
   */
  readonly deployment: string | undefined
}

/**
 * The ledger refused a batch of request rows for their data (a value out of a column's range, a
 * workspace it does not know): written again the same way it would be refused again. `reason`
 * starts with the SQLSTATE-like code of the refusal (`22003: …`).
 */
export class RequestsRefused extends Data.TaggedError("RequestsRefused")<{ readonly reason: string }> {}

/** The store does not know the reporting zone (PostgreSQL older than the runtime's zone data). */
export class ZoneUnknownToStore extends Data.TaggedError("ZoneUnknownToStore")<{ readonly zone: string }> {}

/** One row of an export, its cell values in the layout's column order. */
export type ValueRow = ReadonlyArray<unknown>

export interface ExportRead {
  /**
   * The number of rows `rows` gives, known before the first is read (same snapshot), counted only up to
   * the read's `maxRows`: `maxRows + 1` stands for "more than maxRows".
   */
  readonly total: number
  /** The rows in file order, in batches; none when `total` is 0 or over `maxRows` (nothing is read then). */
  readonly rows: Stream.Stream<ReadonlyArray<ValueRow>, ZoneUnknownToStore | StorageFailure>
}

export interface ExportCsvRead {
  /** As `ExportRead.total`. */
  readonly total: number
  /**
   * The rows as CSV data lines of the export's layout (`domain/csv`: the file's lines without their line
   * ends), in file order, in batches; none when `total` is 0 or over `maxRows`.
   */
  readonly lines: Stream.Stream<ReadonlyArray<string>, ZoneUnknownToStore | StorageFailure>
}

/** Who ran an export: in the console (operator or an email), or an API key. */
export type ExportCreator = { readonly label: string } | { readonly keyId: string }

/** An export that wrote a file, as the console's list of recent exports needs it. */
export interface ExportRunEntry {
  readonly workspaceId: string
  readonly dataType: ExportKind
  /** The resolved range, ISO 8601 with the zone's offset. */
  readonly rangeFrom: string
  readonly rangeTo: string
  readonly timezone: string
  readonly recordCount: number
  readonly filePath: string
  readonly createdBy: ExportCreator
  readonly linkExpiresAt: Date
}

export interface ExportRun extends ExportRunEntry {
  readonly id: string
  readonly createdAt: Date
}

/**
 * The usage ledger: platform activity ingested from the platform, the requests this service
 * forwarded, the five export reads over them, and the record of exports run. Everything written
 * is idempotent by its id: events by (workspace, event id), request rows by (workspace, record id).
 */
export interface UsageLedgerShape {
  /**
   * Stores a validated batch of events in one go. Dimensions (users, assistants, projects,
   * workflows) keep, per field, the value of the newest event that carried it: a late or retried
   * batch of older events never puts an old email or name back.
   */
  readonly ingest: (workspaceId: string, events: ReadonlyArray<UsageEvent>) => Effect.Effect<IngestResult, StorageFailure>
  /** Stores request rows, all or none; a row whose record id is already stored is skipped. */
  readonly insertRequests: (rows: ReadonlyArray<ApiRequestRow>) => Effect.Effect<void, RequestsRefused | StorageFailure>
  /** Keeps a row the ledger refused even alone, whole (`line`, as journaled) with the reason; once per record id. */
  readonly deadLetter: (row: ApiRequestRow, line: string, reason: string) => Effect.Effect<void, StorageFailure>
  /**
   * The rows of one export over [from, to), one per entity and local day of the zone, with their
   * count; both read at one point in time, whatever is written meanwhile. Open while the scope is.
   * The count stops past `maxRows` (the export's row limit): a refusal costs no full count, and its
   * rows are never read.
   */
  readonly readExport: (
    kind: ExportKind,
    input: ExportQueryInput,
    limits: { readonly maxRows: number }
  ) => Effect.Effect<ExportRead, ZoneUnknownToStore | StorageFailure, Scope.Scope>
  /**
   * The same read as `readExport`, the rows already CSV lines: what an export without privacy rules to
   * apply writes as it is (on PostgreSQL the database encodes them: the service's event loop only joins).
   */
  readonly readExportCsv: (
    kind: ExportKind,
    input: ExportQueryInput,
    limits: { readonly maxRows: number }
  ) => Effect.Effect<ExportCsvRead, ZoneUnknownToStore | StorageFailure, Scope.Scope>
  readonly recordExportRun: (run: ExportRunEntry) => Effect.Effect<void, StorageFailure>
  /** The workspace's export runs whose links still live, newest link first. */
  readonly recentExportRuns: (workspaceId: string, limit: number) => Effect.Effect<ReadonlyArray<ExportRun>, StorageFailure>
}
