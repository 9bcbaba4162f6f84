import { Clock, Context, Data, Effect, Either, Exit, Layer, Redacted, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { AppConfig } from "../../config"
import { encodeHeader, encodeRows } from "../../domain/csv"
import { type DatePointInput, InvalidDatePoint, resolveDateRange } from "../../domain/datePoint"
import { exportFilePath, type ExportKind, exportLayouts, userIdentifyingColumns } from "../../domain/exportLayouts"
import { makeUserPseudonymizer, protectUserColumns, userPrivacyMode } from "../../domain/pseudonym"
import { ExportStorage, type ExportStorageError, type InvalidExportPath } from "../ExportStorage/index"
import { SigningSecret } from "../SigningSecret"
import type { StorageFailure } from "../StorageFailure"
import { type Workspace } from "../../domain/workspace"
import { ApiKeys } from "../ApiKeys"
import { UsageLedger, type ValueRow, type ZoneUnknownToStore } from "../UsageLedger/index"
import { ExportPriceCatalog } from "./priceCatalog"
import { Metrics } from "../Metrics"
import { spansWhen } from "../traceSpans"
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
 * Exports running at once per instance; more wait their turn. On the PostgreSQL ledger each holds two
 * pooled connections while it reads: a bound keeps the pool (20) from being taken by exports waiting
 * for their second.
 */
const CONCURRENT_EXPORTS = 4

/** A read failure: the client's fault when the ledger does not know the zone (as sent), else the ledger's. */
const readFailure = (sentZone: string) => (error: ZoneUnknownToStore | StorageFailure): InvalidDatePoint | StorageFailure =>
  error._tag === "ZoneUnknownToStore"
    ? new InvalidDatePoint({
      field: "from.timezone",
      message: `time zone "${sentZone}" is not known to the database: use another IANA identifier of the same zone`
    })
    : error

/** The `<suffix>` of the file name after the layout version: 12 random base-36 characters. */
const uniqueId = (): string =>
  Array.from(randomBytes(12), (byte) => "0123456789abcdefghijklmnopqrstuvwxyz"[byte % 36]).join("")

/**
 * Runs one usage export: resolves the date range, applies the workspace's rules, streams the rows
 * the usage ledger reads through the CSV encoder into export storage, records the run, and returns
 * the file's reference. Memory stays flat whatever the row count: a few batches of rows in flight.
 */
export class ExportService extends Context.Tag("ExportService")<ExportService, {
  readonly run: (request: ExportRequest) => Effect.Effect<ExportOutcome, ExportFailure>
  /** The workspace's exports whose links still live, newest first. */
  readonly recent: (workspaceId: string, limit: number) => Effect.Effect<ReadonlyArray<RecentExport>, ExportStorageError | InvalidExportPath | StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    ExportService,
    Effect.gen(function*() {
      const ledger = yield* UsageLedger
      const keys = yield* ApiKeys
      const storage = yield* ExportStorage
      const { pseudonymKey } = yield* SigningSecret
      const { prices } = yield* ExportPriceCatalog
      const config = yield* AppConfig
      const { exportLinkTtlSeconds, exportMaxRows } = config
      const metrics = yield* Metrics
      const span = spansWhen(config)
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
          const failure = readFailure(from.timezone)
          const read = yield* ledger.readExport(kind, input).pipe(Effect.mapError(failure), span("export.count"))
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
          const stored = yield* storage.write(filePath, content).pipe(span("export.write"))
          // Whole seconds: what a local link's `expires` can say.
          const expiresAt = new Date((Math.floor((yield* Clock.currentTimeMillis) / 1000) + exportLinkTtlSeconds) * 1000)
          const downloadUrl = yield* storage.downloadUrl(filePath, expiresAt).pipe(span("export.link"))
          const dateRange = { from: range.from.iso, to: range.to.iso }
          // Recorded for the console's list of recent exports (any instance, any browser).
          yield* ledger.recordExportRun({
            workspaceId: workspace.id,
            dataType: kind,
            rangeFrom: dateRange.from,
            rangeTo: dateRange.to,
            timezone: from.timezone,
            recordCount,
            filePath,
            createdBy,
            linkExpiresAt: expiresAt
          }).pipe(span("export.record"))
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
        }).pipe(
          Effect.scoped,
          slots.withPermits(1),
          span("export.run", { attributes: { "wsapi.export.kind": kind } }),
          timed(kind)
        )

      /** The export's duration at /metrics, by kind and outcome (a refusal for no data is an outcome too). */
      const timed = (kind: string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
        Effect.suspend(() => {
          const started = performance.now()
          return Effect.onExit(self, (exit) =>
            Effect.sync(() => metrics.exportFinished(kind, Exit.isSuccess(exit) ? "succeeded" : "failed", (performance.now() - started) / 1000)))
        })

      /** "API key <name> (<prefix>)" of the keys that ran exports, read when listing: a renamed key shows its current name. */
      const keyLabels = (workspaceId: string) =>
        keys.list(workspaceId).pipe(
          Effect.map((list) => new Map(list.map((key) => [key.id, `API key ${key.name} (${key.displayPrefix})`]))),
          Effect.catchTag("WorkspaceNotFound", () => Effect.succeed(new Map<string, string>()))
        )

      const recent = (workspaceId: string, limit: number) =>
        Effect.gen(function*() {
          const runs = yield* ledger.recentExportRuns(workspaceId, limit)
          const labels = runs.some((run) => "keyId" in run.createdBy) ? yield* keyLabels(workspaceId) : new Map<string, string>()
          return yield* Effect.forEach(runs, (run) =>
            Effect.map(storage.downloadUrl(run.filePath, run.linkExpiresAt), (downloadUrl): RecentExport => ({
              id: run.id,
              filePath: run.filePath,
              downloadUrl,
              dataType: run.dataType,
              recordCount: run.recordCount,
              dateRange: { from: run.rangeFrom, to: run.rangeTo },
              timezone: run.timezone,
              createdBy: "label" in run.createdBy
                ? run.createdBy.label
                : labels.get(run.createdBy.keyId) ?? "API key",
              createdAt: run.createdAt,
              expiresAt: run.linkExpiresAt
            })))
        })

      return { run, recent }
    })
  )
}
