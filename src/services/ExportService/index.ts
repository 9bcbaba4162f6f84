import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Context, Data, Effect, Either, Layer, Redacted, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { AppConfig } from "../../config"
import { encodeHeader, encodeRows } from "../../domain/csv"
import { type DatePointInput, InvalidDatePoint, resolveDateRange } from "../../domain/datePoint"
import { exportFilePath, type ExportKind, exportLayouts, userIdentifyingColumns } from "../../domain/exportLayouts"
import { exportCountStatement, exportRowsStatement } from "../../domain/exportQueries"
import { makeUserPseudonymizer, protectUserColumns, userPrivacyMode } from "../../domain/pseudonym"
import { ExportStorage, type ExportStorageError, type InvalidExportPath } from "../ExportStorage/index"
import { SigningSecret } from "../SigningSecret"
import { StorageFailure } from "../StorageFailure"
import { type Workspace } from "../../domain/workspace"
import { ExportPriceCatalog } from "./priceCatalog"
import { openExportRead, type ValueRow } from "./snapshotCursor"
import { encodeValueRows, namedRow } from "./valueRows"

export interface ExportRequest {
  readonly kind: ExportKind
  readonly workspace: Workspace
  readonly from: DatePointInput
  readonly to: DatePointInput
  /** Who ran it, for the list of recent exports: in the console (operator or an email), or an API key. */
  readonly createdBy: { readonly label: string } | { readonly keyId: string }
}

/** The spec's `data` of a successful export. */
export interface ExportOutcome {
  readonly filePath: string
  readonly downloadUrl: string
  readonly dataType: ExportKind
  /** Data rows in the file (the header line is not a record). */
  readonly recordCount: number
  /** The requested range as resolved, in ISO 8601 with each point's zone offset. */
  readonly dateRange: { readonly from: string; readonly to: string }
}

/** An export of the workspace whose link still lives, with a link signed again (same expiry). */
export interface RecentExport extends ExportOutcome {
  readonly id: string
  readonly timezone: string
  readonly createdBy: string
  readonly createdAt: Date
  readonly expiresAt: Date
}

/** Nothing to export: no activity in the range, or workflows are off in the workspace. */
export class ExportNoData extends Data.TaggedError("ExportNoData")<{
  readonly kind: ExportKind
  readonly reason: "no_rows" | "workflows_disabled"
}> {}

/** The export would have more rows than EXPORT_MAX_ROWS. */
export class ExportTooLarge extends Data.TaggedError("ExportTooLarge")<{
  readonly rows: number
  readonly limit: number
}> {}

export type ExportFailure =
  | InvalidDatePoint
  | ExportNoData
  | ExportTooLarge
  | ExportStorageError
  | InvalidExportPath
  | StorageFailure

/**
 * Exports running at once per instance; more wait their turn. Each holds two pooled connections
 * while it reads: a bound keeps the pool (20) from being taken by exports waiting for their second.
 */
const CONCURRENT_EXPORTS = 4

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

/** A query failure: the client's fault when the zone is unknown to the database, else the database's. */
const queryFailure = (zone: string, sentZone: string) => (error: SqlError.SqlError): InvalidDatePoint | StorageFailure =>
  isUnknownZone(error, zone)
    ? new InvalidDatePoint({
      field: "from.timezone",
      message: `time zone "${sentZone}" is not known to the database: use another IANA identifier of the same zone`
    })
    : new StorageFailure({ cause: error })

/** The `<suffix>` of the file name after the layout version: 12 random base-36 characters. */
const uniqueId = (): string =>
  Array.from(randomBytes(12), (byte) => "0123456789abcdefghijklmnopqrstuvwxyz"[byte % 36]).join("")

/**
 * Runs one usage export: resolves the date range, applies the workspace's rules, streams the rows
 * from a database cursor through the CSV encoder into export storage, and returns the file's
 * reference. Memory stays flat whatever the row count: a few batches of rows in flight at a time.
 */
export class ExportService extends Context.Tag("ExportService")<ExportService, {
  readonly run: (request: ExportRequest) => Effect.Effect<ExportOutcome, ExportFailure>
  /** The workspace's exports whose links still live, newest first. */
  readonly recent: (workspaceId: string, limit: number) => Effect.Effect<ReadonlyArray<RecentExport>, ExportStorageError | InvalidExportPath | StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    ExportService,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const storage = yield* ExportStorage
      const { pseudonymKey } = yield* SigningSecret
      const { prices } = yield* ExportPriceCatalog
      const { exportLinkTtlSeconds, exportMaxRows } = yield* AppConfig
      const slots = yield* Effect.makeSemaphore(CONCURRENT_EXPORTS)

      const run = ({ createdBy, from, kind, to, workspace }: ExportRequest) =>
        Effect.gen(function*() {
          const range = yield* Either.match(resolveDateRange(from, to), { onLeft: Effect.fail, onRight: Effect.succeed })
          if (kind === "workflows" && !workspace.settings.workflowsEnabled) {
            return yield* Effect.fail(new ExportNoData({ kind, reason: "workflows_disabled" }))
          }
          const layout = exportLayouts[kind]
          const input = {
            workspaceId: workspace.id,
            from: range.from.instant,
            to: range.to.instant,
            zone: range.zone,
            catalog: prices
          }
          const failure = queryFailure(range.zone, from.timezone)
          const read = yield* openExportRead(sql, {
            rows: exportRowsStatement(kind, input),
            count: exportCountStatement(kind, input)
          }).pipe(Effect.mapError(failure))
          // Decided on the count before anything is written.
          if (read.total === 0) return yield* Effect.fail(new ExportNoData({ kind, reason: "no_rows" }))
          if (read.total > exportMaxRows) {
            return yield* Effect.fail(new ExportTooLarge({ rows: read.total, limit: exportMaxRows }))
          }

          const privacy = userPrivacyMode(workspace.settings)
          const protect = protectUserColumns(layout, privacy, makeUserPseudonymizer(Redacted.value(pseudonymKey), workspace.id))
          // Rows are named only when a privacy rule has cells to change.
          const encode = privacy === "clear" || userIdentifyingColumns(kind).length === 0
            ? (rows: ReadonlyArray<ValueRow>) => encodeValueRows(rows, layout)
            : (rows: ReadonlyArray<ValueRow>) => encodeRows(rows.map((row) => protect(namedRow(row, layout))), layout)
          let recordCount = 0
          // One string per fetched batch: per-row pieces would cost more than the encoding itself.
          const content = Stream.concat(
            Stream.succeed(encodeHeader(layout)),
            read.rows.pipe(
              Stream.mapError(failure),
              Stream.map((rows) => {
                recordCount += rows.length
                return encode(rows)
              })
            )
          )
          const filePath = exportFilePath({
            kind,
            workspaceId: workspace.id,
            fromDate: range.from.fileDate,
            toDate: range.to.fileDate,
            uniqueId: uniqueId()
          })
          const stored = yield* storage.write(filePath, content)
          // Whole seconds: what a local link's `expires` can say.
          const expiresAt = new Date((Math.floor((yield* Clock.currentTimeMillis) / 1000) + exportLinkTtlSeconds) * 1000)
          const downloadUrl = yield* storage.downloadUrl(filePath, expiresAt)
          const dateRange = { from: range.from.iso, to: range.to.iso }
          // Recorded for the console's list of recent exports (any instance, any browser).
          const label = "label" in createdBy ? createdBy.label : null
          const keyId = "keyId" in createdBy ? createdBy.keyId : null
          yield* sql`INSERT INTO export_runs
            (workspace_id, data_type, range_from, range_to, timezone, record_count, file_path, created_by, created_by_key, link_expires_at)
            VALUES (${workspace.id}, ${kind}, ${dateRange.from}, ${dateRange.to}, ${from.timezone}, ${recordCount}, ${filePath},
                    ${label}, ${keyId}, ${expiresAt})`.pipe(Effect.mapError((cause) => new StorageFailure({ cause })))
          yield* Effect.logInfo("export written").pipe(
            Effect.annotateLogs({ kind, workspaceId: workspace.id, filePath, rows: recordCount, bytes: stored.bytes })
          )
          return {
            filePath,
            downloadUrl,
            dataType: kind,
            recordCount,
            dateRange
          }
        }).pipe(Effect.scoped, slots.withPermits(1))

      type RunRow = {
        id: string
        data_type: ExportKind
        range_from: string
        range_to: string
        timezone: string
        record_count: number
        file_path: string
        created_by: string
        created_at: Date
        link_expires_at: Date
      }
      const recent = (workspaceId: string, limit: number) =>
        sql<RunRow>`SELECT r.id, r.data_type, r.range_from, r.range_to, r.timezone, r.record_count, r.file_path,
                 coalesce(r.created_by, 'API key ' || k.name || ' (' || k.display_prefix || ')') AS created_by,
                 r.created_at, r.link_expires_at
          FROM export_runs r LEFT JOIN api_keys k ON k.id = r.created_by_key
          WHERE r.workspace_id = ${workspaceId} AND r.link_expires_at > now()
          ORDER BY r.link_expires_at DESC, r.created_at DESC, r.id LIMIT ${limit}`.pipe(
          Effect.mapError((cause) => new StorageFailure({ cause })),
          Effect.flatMap(Effect.forEach((row) =>
            Effect.map(storage.downloadUrl(row.file_path, row.link_expires_at), (downloadUrl) => ({
              id: row.id,
              filePath: row.file_path,
              downloadUrl,
              dataType: row.data_type,
              recordCount: row.record_count,
              dateRange: { from: row.range_from, to: row.range_to },
              timezone: row.timezone,
              createdBy: row.created_by,
              createdAt: row.created_at,
              expiresAt: row.link_expires_at
            }))
          ))
        )

      return { run, recent }
    })
  )
}
