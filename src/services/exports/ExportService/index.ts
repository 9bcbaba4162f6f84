import { Clock, Context, Data, Effect, Either, Exit, Layer, Redacted, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { AppConfig, EXPORTS_PER_INSTANCE } from "../../../config"
import { CSV_LINE_END, encodeHeader, encodeRow } from "../../../domain/csv"
import { type DatePointInput, InvalidDatePoint, resolveDateRange, type ResolvedDateRange } from "../../../domain/datePoint"
import type { ExportQueryInput } from "../../usage/3-UsageLedger/exportQueries"
import { exportFilePath, type ExportKind, exportLayouts, userIdentifyingColumns } from "../../../domain/exportLayouts"
import { makeUserPseudonymizer, protectUserColumns, userPrivacyMode } from "../../../domain/pseudonym"
import { ExportStorage, type ExportStorageFailure, type InvalidExportPath } from "../ExportStorage/index"
import { SigningSecret } from "../SigningSecret"
import type { StorageFailure } from "../../../platform/StorageFailure"
import { type Workspace } from "../../../domain/workspace"
import { ApiKeys } from "../../identity/ApiKeys"
import { type ExportCsvRead, UsageLedger, type ValueRow, type ZoneUnknownToStore } from "../../usage/3-UsageLedger/index"
import { ExportPriceCatalog } from "./priceCatalog"
import { Metrics } from "../../../platform/Metrics"
import { spansWhen } from "../../../platform/traceSpans"
import { encodeInSlices } from "./encodeInSlices"
import { ExportQueueTimeout, makeExportSlots } from "./exportSlots"
import { type ExportRange, makeRefusedRanges } from "./refusedRanges"
import { namedRow } from "./valueRows"

export { ExportQueueTimeout } from "./exportSlots"

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

/** The export would have more rows than EXPORT_MAX_ROWS (counted only that far: how many more is not known). */
export class ExportTooLarge extends Data.TaggedError("ExportTooLarge")<{
  readonly limit: number
}> {}

export type ExportFailure =
  | InvalidDatePoint
  | ExportNoData
  | ExportTooLarge
  | ExportQueueTimeout
  | ExportStorageFailure
  | InvalidExportPath
  | StorageFailure

/** How long a range found over the row limit is refused without reading the ledger again, and how many are kept. */
const REFUSED_RANGES = { ttlMs: 10 * 60 * 1000, maxEntries: 1_000 }

/** A read failure: the client's fault when the ledger does not know the zone (as sent), else the ledger's. */
const readFailure = (sentZone: string) => (error: ZoneUnknownToStore | StorageFailure): InvalidDatePoint | StorageFailure =>
  error._tag === "ZoneUnknownToStore"
    ? new InvalidDatePoint({
      field: "from.timezone",
      message: `time zone "${sentZone}" is not known to the database: use another IANA identifier of the same zone`
    })
    : error

/** What the memory of refused ranges knows an export by. */
const refusable = (workspace: Workspace, kind: ExportKind, range: ResolvedDateRange): ExportRange => ({
  workspaceId: workspace.id,
  kind,
  zone: range.zone,
  from: range.from.instant,
  to: range.to.instant
})

/** The `<suffix>` of the file name after the layout version: 12 random base-36 characters. */
const uniqueId = (): string =>
  Array.from(randomBytes(12), (byte) => "0123456789abcdefghijklmnopqrstuvwxyz"[byte % 36]).join("")

/**
 * Runs one usage export: resolves the date range, applies the workspace's rules, streams the rows
 * the usage ledger reads through the CSV encoder into export storage, records the run, and returns
 * the file's reference. Memory stays flat whatever the row count: a few batches of rows in flight.
 *
 * Exports share the instance fairly: EXPORTS_PER_INSTANCE run at once, at most
 * EXPORT_CONCURRENCY_PER_WORKSPACE of one workspace, the others wait their turn round robin by
 * workspace (`exportSlots`), for EXPORT_QUEUE_TIMEOUT_MS at most. The ledger hands over finished CSV
 * lines (on PostgreSQL, encoded by the database) unless a privacy rule has cells to change; those rows
 * are encoded here a slice of a few milliseconds at a time, with a turn of the event loop between
 * slices (`encodeInSlices`). A range found over EXPORT_MAX_ROWS is refused again without a read
 * (`refusedRanges`).
 */
export class ExportService extends Context.Tag("ExportService")<ExportService, {
  readonly run: (request: ExportRequest) => Effect.Effect<ExportOutcome, ExportFailure>
  /** The workspace's exports whose links still live, newest first. */
  readonly recent: (workspaceId: string, limit: number) => Effect.Effect<ReadonlyArray<RecentExport>, ExportStorageFailure | InvalidExportPath | StorageFailure>
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
      const slots = yield* makeExportSlots({ perInstance: EXPORTS_PER_INSTANCE, ...config.exportSlots })
      yield* metrics.gauge("wsapi_exports", "Usage exports of this instance, by state (running or waiting for a slot).", () => {
        const { running, waiting } = slots.counts()
        return [{ labels: { state: "running" }, value: running }, { labels: { state: "waiting" }, value: waiting }]
      })
      const refused = makeRefusedRanges(REFUSED_RANGES)

      const run = ({ createdBy, from, kind, to, workspace }: ExportRequest) =>
        Effect.gen(function*() {
          const range = yield* Either.match(resolveDateRange(from, to), { onLeft: Effect.fail, onRight: Effect.succeed })
          if (kind === "workflows" && !workspace.settings.workflowsEnabled) {
            return yield* Effect.fail(new ExportNoData({ kind, reason: "workflows_disabled" }))
          }
          if (refused.covers(refusable(workspace, kind, range), yield* Clock.currentTimeMillis)) {
            return yield* Effect.fail(new ExportTooLarge({ limit: exportMaxRows }))
          }
          return yield* write({ createdBy, from, kind, workspace, range }).pipe(Effect.scoped, slots.withSlot(workspace.id))
        }).pipe(
          span("export.run", { attributes: { "wsapi.export.kind": kind } }),
          timed(kind)
        )

      /** The export itself, in a slot: count, rows → CSV → storage, link, run recorded. */
      const write = ({ createdBy, from, kind, range, workspace }: Omit<ExportRequest, "to"> & { readonly range: ResolvedDateRange }) =>
        Effect.gen(function*() {
          const input = {
            workspaceId: workspace.id,
            from: range.from.instant,
            to: range.to.instant,
            zone: range.zone,
            catalog: prices
          }
          const failure = readFailure(from.timezone)
          const limits = { maxRows: exportMaxRows }
          const privacy = userPrivacyMode(workspace.settings)
          // Lines as the ledger encodes them (on PostgreSQL, the database) unless a privacy rule has cells to change.
          const asIs = privacy === "clear" || userIdentifyingColumns(kind).length === 0
          const read = yield* (asIs ? ledger.readExportCsv(kind, input, limits) : readProtected(kind, input, limits, workspace)).pipe(
            Effect.mapError(failure),
            span("export.count")
          )
          // Decided on the count before anything is written.
          if (read.total === 0) return yield* Effect.fail(new ExportNoData({ kind, reason: "no_rows" }))
          if (read.total > exportMaxRows) {
            refused.remember(refusable(workspace, kind, range), yield* Clock.currentTimeMillis)
            return yield* Effect.fail(new ExportTooLarge({ limit: exportMaxRows }))
          }
          let recordCount = 0
          // One string per fetched batch: per-row pieces would cost more than the lines themselves.
          const content = Stream.concat(
            Stream.succeed(encodeHeader(exportLayouts[kind])),
            read.lines.pipe(
              Stream.mapError(failure),
              Stream.map((lines) => {
                recordCount += lines.length
                return lines.join(CSV_LINE_END) + CSV_LINE_END
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
        })

      /**
       * The rows with the workspace's privacy rule applied (pseudonyms, or user columns left empty), encoded by
       * the service a slice of a few milliseconds at a time, a turn of the event loop between slices.
       */
      const readProtected = (kind: ExportKind, input: ExportQueryInput, limits: { readonly maxRows: number }, workspace: Workspace) =>
        Effect.map(ledger.readExport(kind, input, limits), ({ rows, total }): ExportCsvRead => {
          const layout = exportLayouts[kind]
          const protect = protectUserColumns(layout, userPrivacyMode(workspace.settings), makeUserPseudonymizer(Redacted.value(pseudonymKey), workspace.id))
          const encodeLine = (row: ValueRow) => encodeRow(protect(namedRow(row, layout)), layout).slice(0, -CSV_LINE_END.length)
          return { total, lines: Stream.mapEffect(rows, (batch) => encodeInSlices(batch, encodeLine)) }
        })

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
