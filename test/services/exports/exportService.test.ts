/**
 * ExportService on in-memory layers only (UsageLedger.memory, ExportStorage.memory or .local in a
 * temporary folder, SigningSecret.fixed): it orchestrates — ledger read → CSV → storage → signed
 * link → run recorded — and needs no database.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Exit, Fiber, Layer, Option, Redacted, Schema, Stream, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { UsageEvent } from "../../../src/domain/usageEvent"
import { type AppConfigShape, AppConfig } from "../../../src/config"
import { userPseudonyms } from "../../../src/domain/pseudonym"
import { verifyDownload } from "../../../src/domain/signedUrl"
import { ApiKeys } from "../../../src/services/identity/ApiKeys"
import { ExportService } from "../../../src/services/exports/ExportService/index"
import { ExportPriceCatalog } from "../../../src/services/exports/ExportService/priceCatalog"
import { ExportStorage } from "../../../src/services/exports/ExportStorage/index"
import { Metrics } from "../../../src/platform/Metrics"
import { SigningSecret } from "../../../src/services/exports/SigningSecret"
import { UsageLedger } from "../../../src/services/usage/3-UsageLedger/index"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import type { Workspace } from "../../../src/domain/workspace"
import { gatedLedger, LedgerGate } from "../../support/gatedLedger"
import { message, workflowRun } from "../../support/usage"
import { tempDir } from "../../support/tempDirs"

const SECRET = "a fixed signing secret for the export tests"

const exportsOn = <E>(storage: Layer.Layer<ExportStorage, E, AppConfig | SigningSecret>, config: Partial<AppConfigShape> = {}) =>
  exportsWith(storage, UsageLedger.memory, config)

const exportsWith = <E, L>(
  storage: Layer.Layer<ExportStorage, E, AppConfig | SigningSecret>,
  ledger: Layer.Layer<L>,
  config: Partial<AppConfigShape> = {}
) =>
  ExportService.layer.pipe(
    Layer.provideMerge(storage),
    Layer.provideMerge(ledger),
    Layer.provideMerge(ApiKeys.memory),
    Layer.provideMerge(Workspaces.memory),
    Layer.provideMerge(SigningSecret.fixed(SECRET)),
    Layer.provide(ExportPriceCatalog.fixed([])),
    Layer.provide(Metrics.none),
    Layer.provideMerge(AppConfig.layerWith(config))
  )

const berlin = (date: string) => ({ date, timezone: "Europe/Berlin" })

/** A workspace with two users' messages on 2026-03-28 (Berlin) and one workflow run. */
const seededWorkspace = (settings: { anonymizeUsers?: boolean; workflowsEnabled?: boolean } = {}) =>
  Effect.gen(function*() {
    const workspace = yield* Effect.suspend(() => Effect.flatMap(Workspaces, (w) => w.create("exports", settings)))
    const events = yield* Effect.orDie(Schema.decodeUnknown(Schema.Array(UsageEvent))([
      message("m1", "2026-03-28T09:00:00Z"),
      message("m2", "2026-03-28T10:30:00Z", { user: { id: "u2", email: "bo@example.com", name: "Bo" }, feature: "chat" }),
      workflowRun("r1", "2026-03-28T11:00:00Z", 1_500)
    ]))
    yield* Effect.flatMap(UsageLedger, (ledger) => ledger.ingest(workspace.id, events))
    return workspace
  })

const storedText = (filePath: string) =>
  Effect.flatMap(ExportStorage, (storage) =>
    Effect.flatMap(storage.read(filePath), Option.match({
      onNone: () => Effect.succeed<string | undefined>(undefined),
      onSome: ({ stream }) => Effect.map(Stream.runCollect(stream), (chunks) => Buffer.concat(Chunk.toArray(chunks)).toString())
    })))

const DAY = "2026-03-28T00:00:00+01:00,2026-03-29T00:00:00+01:00"

describe("ExportService on memory layers", () => {
  it.effect("reads the ledger, writes the CSV to storage and answers with the file, its link and its rows", () =>
    Effect.gen(function*() {
      const workspace = yield* seededWorkspace()
      const exports = yield* ExportService
      const outcome = yield* exports.run({ kind: "users", workspace, from: berlin("2026-03-28"), to: berlin("2026-03-29"), createdBy: { label: "operator" } })
      expect(outcome).toMatchObject({
        dataType: "users",
        recordCount: 2,
        dateRange: { from: "2026-03-28T00:00:00+01:00", to: "2026-03-29T00:00:00+01:00" }
      })
      expect(outcome.filePath).toMatch(new RegExp(`^users-usage/${workspace.id}/users-usage-20260328-20260329-v1-[0-9a-z]{12}\\.csv$`))
      expect(outcome.downloadUrl).toBe(`memory://${outcome.filePath}`)
      expect((yield* storedText(outcome.filePath))?.split("\r\n")).toEqual([
        "period_start,period_end,user_id,user_email,user_name,messages,conversations,assistants_used,projects_used,features_used,models_used,active_hours,first_active_hour,last_active_hour,input_tokens,output_tokens",
        `${DAY},u1,ann@example.com,Ann,1,0,0,0,,chatgen-4o,1,10,10,10,20`,
        `${DAY},u2,bo@example.com,Bo,1,0,0,0,chat,chatgen-4o,1,11,11,10,20`,
        ""
      ])
    }).pipe(Effect.provide(exportsOn(ExportStorage.memory))))

  it.effect("pseudonymises the users of a workspace that asks for it, with the server secret", () =>
    Effect.gen(function*() {
      const workspace = yield* seededWorkspace({ anonymizeUsers: true })
      const outcome = yield* Effect.flatMap(ExportService, (exports) =>
        exports.run({ kind: "users", workspace, from: berlin("2026-03-28"), to: berlin("2026-03-29"), createdBy: { label: "operator" } }))
      const { pseudonymKey } = yield* SigningSecret
      const ann = userPseudonyms(Redacted.value(pseudonymKey), workspace.id, "u1")
      const text = (yield* storedText(outcome.filePath)) ?? ""
      expect(text).toContain(`${DAY},${ann.id},${ann.email},${ann.name},1,`)
      expect(text).not.toContain("ann@example.com")
      expect(text).not.toContain(",u2,")
    }).pipe(Effect.provide(exportsOn(ExportStorage.memory))))

  it.effect("refuses an empty range, workflows when they are off, and more rows than EXPORT_MAX_ROWS, writing nothing", () =>
    Effect.gen(function*() {
      const exports = yield* ExportService
      const workspace = yield* seededWorkspace()
      const run = (kind: "users" | "workflows", w = workspace, from = "2026-03-28") =>
        Effect.flip(exports.run({ kind, workspace: w, from: berlin(from), to: berlin("2026-03-29"), createdBy: { label: "operator" } }))
      expect(yield* run("users", workspace, "2026-03-28T12:00")).toMatchObject({ _tag: "ExportNoData", reason: "no_rows" })
      expect(yield* run("workflows", yield* seededWorkspace({ workflowsEnabled: false }))).toMatchObject({ _tag: "ExportNoData", reason: "workflows_disabled" })
      expect(yield* run("users")).toMatchObject({ _tag: "ExportTooLarge", limit: 1 })
      expect(yield* run("users", workspace, "2026-03-29")).toMatchObject({ _tag: "InvalidDatePoint", field: "to" })
      expect(yield* Effect.flatMap(ExportService, (e) => e.recent(workspace.id, 10))).toEqual([])
    }).pipe(Effect.provide(exportsOn(ExportStorage.memory, { exportMaxRows: 1 }))))

  it.effect("lists the runs whose links live, naming the API key that ran one by its name", () =>
    Effect.gen(function*() {
      const workspace = yield* seededWorkspace()
      const { record } = yield* Effect.flatMap(ApiKeys, (keys) => keys.create(workspace.id, "reports", ["USAGE_EXPORT_API"]))
      const exports = yield* ExportService
      const byKey = yield* exports.run({ kind: "workflows", workspace, from: berlin("2026-03-28"), to: berlin("2026-03-29"), createdBy: { keyId: record.id } })
      const recent = yield* exports.recent(workspace.id, 10)
      expect(recent).toHaveLength(1)
      expect(recent[0]).toMatchObject({
        filePath: byKey.filePath,
        downloadUrl: byKey.downloadUrl,
        dataType: "workflows",
        recordCount: 1,
        dateRange: byKey.dateRange,
        timezone: "Europe/Berlin",
        createdBy: `API key reports (${record.displayPrefix})`
      })
    }).pipe(Effect.provide(exportsOn(ExportStorage.memory))))

  it.effect("stores the file locally and signs its download link with the server secret", () =>
    Effect.gen(function*() {
      const workspace = yield* seededWorkspace()
      const outcome = yield* Effect.flatMap(ExportService, (exports) =>
        exports.run({ kind: "workflows", workspace, from: berlin("2026-03-28"), to: berlin("2026-03-29"), createdBy: { label: "operator" } }))
      const link = new URL(outcome.downloadUrl)
      expect(link.pathname).toBe(`/downloads/${outcome.filePath}`)
      const { linkKey } = yield* SigningSecret
      const presented = { filePath: outcome.filePath, expires: link.searchParams.get("expires") ?? undefined, signature: link.searchParams.get("signature") ?? undefined }
      expect(Either.isRight(verifyDownload(Redacted.value(linkKey), presented, 0))).toBe(true)
      expect(verifyDownload(Redacted.value(linkKey), { ...presented, filePath: outcome.filePath.replace("workflows-usage-", "users-usage-") }, 0)).toEqual(Either.left("bad_path"))
      const { dataDir } = yield* AppConfig
      expect(fs.readFileSync(path.join(dataDir, "exports", outcome.filePath), "utf8").split("\r\n")[1]).toBe(
        `${DAY},w1,Nightly,1,1,0,1.0000,1500,1500,1500,1500,0`
      )
    }).pipe(Effect.provide(exportsOn(ExportStorage.local, { dataDir: tempDir("export-service-test-") })), Effect.scoped))
})

/** The ledger in memory behind a gate that holds chosen workspaces' export reads open (test/support/gatedLedger). */
const heldLedger = gatedLedger.pipe(Layer.provideMerge(UsageLedger.memory))

/** Polls a condition, letting the forked exports run between looks (no timer: they only need the CPU). */
const eventually = (condition: () => boolean) =>
  Effect.yieldNow().pipe(Effect.repeat({ until: condition, times: 10_000 }), Effect.zipRight(Effect.sync(condition)))

const users = (workspace: Workspace, from = "2026-03-28", to = "2026-03-29") =>
  Effect.flatMap(ExportService, (exports) =>
    exports.run({ kind: "users", workspace, from: berlin(from), to: berlin(to), createdBy: { label: "operator" } }))

describe("ExportService sharing the instance", () => {
  it.effect("runs a workspace's 1-row export while another's eight are held, and at most two of one workspace at once", () =>
    Effect.gen(function*() {
      const gate = yield* LedgerGate
      const heavy = yield* seededWorkspace()
      const light = yield* seededWorkspace()
      yield* gate.hold(heavy.id)
      const eight = yield* Effect.forEach(Array.from({ length: 8 }), () => Effect.fork(users(heavy)))
      expect(yield* eventually(() => gate.reads(heavy.id).open === 2)).toBe(true)

      // Not queued behind the eight: answered while all of them are still held.
      const answered = yield* users(light, "2026-03-28T11:00")
      expect(answered.recordCount).toBe(1)
      expect(gate.reads(heavy.id)).toEqual({ open: 2, most: 2, total: 2 })

      yield* gate.release
      for (const fiber of eight) expect((yield* Fiber.join(fiber)).recordCount).toBe(2)
      // Never more than EXPORT_CONCURRENCY_PER_WORKSPACE (2) of them at once.
      expect(gate.reads(heavy.id)).toEqual({ open: 0, most: 2, total: 8 })
    }).pipe(Effect.provide(exportsWith(ExportStorage.memory, heldLedger))))

  it.effect("answers an export that found no slot within EXPORT_QUEUE_TIMEOUT_MS with who held it", () =>
    Effect.gen(function*() {
      const gate = yield* LedgerGate
      const workspace = yield* seededWorkspace()
      yield* gate.hold(workspace.id)
      const first = yield* Effect.fork(users(workspace))
      expect(yield* eventually(() => gate.reads(workspace.id).open === 1)).toBe(true)
      const second = yield* Effect.fork(users(workspace))
      yield* TestClock.adjust("5 seconds")
      expect(yield* Effect.flip(Fiber.join(second))).toMatchObject({ _tag: "ExportQueueTimeout", heldBy: "workspace", limit: 1, waitedMs: 5_000 })
      yield* gate.release
      expect(Exit.isSuccess(yield* Fiber.await(first))).toBe(true)
      // The one that timed out never read.
      expect(gate.reads(workspace.id).total).toBe(1)
    }).pipe(Effect.provide(exportsWith(ExportStorage.memory, heldLedger, { exportSlots: { perWorkspace: 1, maxWaitMs: 5_000 } }))))

  it.effect("refuses a range again, or a wider one, without reading the ledger; exactly the limit passes", () =>
    Effect.gen(function*() {
      const gate = yield* LedgerGate
      const workspace = yield* seededWorkspace()
      // Two user rows on 2026-03-28, over EXPORT_MAX_ROWS = 1.
      expect(yield* Effect.flip(users(workspace))).toMatchObject({ _tag: "ExportTooLarge", limit: 1 })
      expect(gate.reads(workspace.id).total).toBe(1)
      expect(yield* Effect.flip(users(workspace))).toMatchObject({ _tag: "ExportTooLarge", limit: 1 })
      expect(yield* Effect.flip(users(workspace, "2026-03-27", "2026-03-30"))).toMatchObject({ _tag: "ExportTooLarge" })
      expect(gate.reads(workspace.id).total).toBe(1)
      // One row, from 11:00 (m2 at 11:30): exactly the limit, read and written.
      expect((yield* users(workspace, "2026-03-28T11:00")).recordCount).toBe(1)
      expect(gate.reads(workspace.id).total).toBe(2)
      // Remembered for ten minutes, then counted again.
      yield* TestClock.adjust("10 minutes")
      expect(yield* Effect.flip(users(workspace))).toMatchObject({ _tag: "ExportTooLarge" })
      expect(gate.reads(workspace.id).total).toBe(3)
    }).pipe(Effect.provide(exportsWith(ExportStorage.memory, heldLedger, { exportMaxRows: 1 }))))
})
