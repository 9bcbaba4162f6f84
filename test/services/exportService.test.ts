/**
 * ExportService on in-memory layers only (UsageLedger.memory, ExportStorage.memory or .local in a
 * temporary folder, SigningSecret.fixed): it orchestrates — ledger read → CSV → storage → signed
 * link → run recorded — and needs no database.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Layer, Option, Redacted, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { UsageEvent } from "../../src/api/schemas/events"
import { type AppConfigShape, AppConfig } from "../../src/config"
import { userPseudonyms } from "../../src/domain/pseudonym"
import { verifyDownload } from "../../src/domain/signedUrl"
import { ApiKeys } from "../../src/services/ApiKeys"
import { ExportService } from "../../src/services/ExportService/index"
import { ExportPriceCatalog } from "../../src/services/ExportService/priceCatalog"
import { ExportStorage } from "../../src/services/ExportStorage/index"
import { Metrics } from "../../src/services/Metrics"
import { SigningSecret } from "../../src/services/SigningSecret"
import { UsageLedger } from "../../src/services/UsageLedger/index"
import { Workspaces } from "../../src/services/Workspaces"
import { message, workflowRun } from "../support/usage"
import { tempDir } from "../support/tempDirs"

const SECRET = "a fixed signing secret for the export tests"

const exportsOn = <E>(storage: Layer.Layer<ExportStorage, E, AppConfig | SigningSecret>, config: Partial<AppConfigShape> = {}) =>
  ExportService.layer.pipe(
    Layer.provideMerge(storage),
    Layer.provideMerge(UsageLedger.memory),
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
      expect(yield* run("users")).toMatchObject({ _tag: "ExportTooLarge", rows: 2, limit: 1 })
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
