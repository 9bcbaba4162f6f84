/**
 * UsageRecorder over a real journal (a folder of the temporary directory) and the in-memory ledger: what
 * it does while the journal's disk refuses writes, and how long shutdown holds a stalled ledger.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Layer, Logger, Schedule, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { tempDir } from "../../support/tempDirs"
import { Metrics } from "../../../src/platform/Metrics"
import { UsageJournal } from "../../../src/services/usage/2-UsageJournal"
import { StorageFailure } from "../../../src/platform/StorageFailure"
import { MemoryUsage, UsageLedger } from "../../../src/services/usage/3-UsageLedger/index"
import { UsageRecorder } from "../../../src/services/usage/1-UsageRecorder"
import { makeTestLayer } from "../../support/makeTestLayer"
import { canMakeReadOnly, makeReadOnly } from "../../support/refusingDisk"
import { requestRecord } from "../../support/requestRecord"

const WORKSPACE = "6f1c2b3a-0000-4000-8000-000000000001"
const fresh = () => tempDir("ws-recorder-journal-")
const segmentLines = (dir: string) =>
  fs.readdirSync(dir).filter((name) => name.endsWith(".jsonl")).flatMap((name) =>
    fs.readFileSync(path.join(dir, name), "utf8").split("\n").filter((line) => line.length > 0)
  )
const journalAt = (directory: string) =>
  UsageJournal.layerWith({ directory, syncEvery: "10 millis", segmentBytes: 1_000_000, retryFirst: "10 millis", retryAtMost: "50 millis" })

const untilJournal = (awaited: "ok" | "failing") =>
  Effect.flatMap(UsageJournal, (journal) =>
    journal.health.pipe(
      Effect.repeat({ until: (health) => health === awaited, schedule: Schedule.spaced("10 millis") }),
      Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`journal never ${awaited}`) }),
      Effect.orDie
    ))

const captureLogs = () => {
  const lines: Array<{ message: string; annotations: Record<string, unknown> }> = []
  const layer = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, message }) =>
      void lines.push({ message: String(message), annotations: Object.fromEntries(annotations) }))
  )
  return { lines, layer }
}

describe("UsageRecorder and its journal", () => {
  it.live.skipIf(!canMakeReadOnly)("refuses billable requests while the journal fails only when required, and journals the memory-only records once it can", () => {
    const dir = fresh()
    const recorderWith = (journalRequired: boolean) =>
      UsageRecorder.layerWith({ capacity: 1_000, batchSize: 100, flushEvery: "10 seconds", journalRequired })
    const test = Effect.gen(function*() {
      const build = (journalRequired: boolean) => Effect.map(Layer.build(recorderWith(journalRequired)), Context.get(UsageRecorder))
      const required = yield* build(true)
      const tolerant = yield* build(false)
      expect(Exit.isSuccess(yield* Effect.exit(required.requireDurable))).toBe(true)

      const restore = makeReadOnly(dir)
      yield* Effect.gen(function*() {
        yield* tolerant.record(requestRecord({ workspaceId: WORKSPACE, requestId: "req_memory_1" }))
        yield* tolerant.record(requestRecord({ workspaceId: WORKSPACE, requestId: "req_memory_2" }))
        yield* untilJournal("failing")
        const refused = yield* Effect.exit(required.requireDurable)
        expect(Exit.isFailure(refused) && JSON.stringify(refused.cause)).toContain("UsageNotDurable")
        expect(Exit.isSuccess(yield* Effect.exit(tolerant.requireDurable))).toBe(true)
        expect(segmentLines(dir)).toEqual([])
      }).pipe(Effect.ensuring(Effect.sync(restore)))

      yield* untilJournal("ok")
      expect(Exit.isSuccess(yield* Effect.exit(required.requireDurable))).toBe(true)
      // The next write puts the memory-only records in the journal first (they survive a crash from then on),
      // then in the ledger: with the ledger refusing for now, they stay in the journal.
      yield* tolerant.flush
      expect(segmentLines(dir).map((line) => JSON.parse(line).requestId)).toEqual(["req_memory_1", "req_memory_2"])
    })
    const ledgerAway = makeTestLayer(UsageLedger)({
      insertRequests: () => Effect.fail(new StorageFailure({ cause: new Error("away") }))
    })
    return test.pipe(
      Effect.provide([journalAt(dir), ledgerAway, Metrics.none]),
      Effect.provide(Logger.remove(Logger.defaultLogger)),
      Effect.scoped
    )
  }, 30_000)

  it.live("shutdown with a stalled ledger gives up after its flush time and says how many records wait in the journal", () =>
    Effect.gen(function*() {
      const dir = fresh()
      const logs = captureLogs()
      const writing = yield* Deferred.make<void>()
      const stalledLedger = makeTestLayer(UsageLedger)({ insertRequests: () => Effect.zipRight(Deferred.succeed(writing, undefined), Effect.never) })
      const scope = yield* Scope.make()
      const recorder = yield* Layer.buildWithScope(
        UsageRecorder.layerWith({ capacity: 1_000, batchSize: 100, flushEvery: "20 millis", shutdownFlush: "300 millis" }).pipe(
          Layer.provide([journalAt(dir), stalledLedger, Metrics.none])
        ),
        scope
      ).pipe(Effect.map(Context.get(UsageRecorder)), Effect.provide(logs.layer))
      for (let i = 0; i < 7; i++) yield* recorder.record(requestRecord({ workspaceId: WORKSPACE, requestId: `req_${i}` }))
      // The periodic write is under way, and never ends.
      yield* Deferred.await(writing)
      // Without the bound this never returns: the test's own timeout would fail it.
      yield* Scope.close(scope, Exit.void)
      const said = logs.lines.find((line) => line.message.includes("wait in the journal for the next start"))
      expect(said?.annotations).toMatchObject({ journaled: 7, lostInMemoryOnly: 0 })
      expect(segmentLines(dir)).toHaveLength(7)
    }), 20_000)

  it.effect("writes everything at shutdown when the ledger answers, and says nothing", () =>
    Effect.gen(function*() {
      const dir = fresh()
      const logs = captureLogs()
      yield* Effect.gen(function*() {
        const recorder = yield* UsageRecorder
        for (let i = 0; i < 5; i++) yield* recorder.record(requestRecord({ workspaceId: WORKSPACE, requestId: `req_${i}` }))
      }).pipe(
        Effect.provide(UsageRecorder.layerWith({ capacity: 1_000, batchSize: 100, flushEvery: "10 seconds" })),
        Effect.provide(journalAt(dir)),
        Effect.provide(logs.layer)
      )
      const stored = yield* Effect.map(MemoryUsage, (store) => store.workspaces.get(WORKSPACE)?.requests.size ?? 0)
      expect(stored).toBe(5)
      expect(logs.lines.filter((line) => line.message.includes("wait in the journal"))).toEqual([])
      expect(segmentLines(dir)).toEqual([])
    }).pipe(Effect.provide(Layer.merge(UsageLedger.memory, Metrics.none))))

  it.effect("replays journal lines written before byok and deployments were recorded, and keeps the deployment of newer ones", () =>
    Effect.gen(function*() {
      const dir = fresh()
      const current = requestRecord({ workspaceId: WORKSPACE, requestId: "req_new", deployment: "eu-primary" })
      // A line as the journal held it before byok and deployment were recorded.
      const { byok: _byok, deployment: _deployment, ...older } = requestRecord({ workspaceId: WORKSPACE, requestId: "req_old" })
      expect(Object.keys(older)).not.toContain("deployment")
      fs.writeFileSync(path.join(dir, "segment-000000000001.jsonl"), `${JSON.stringify(older)}\n${JSON.stringify(current)}\n`)
      yield* Effect.flatMap(UsageRecorder, (recorder) => recorder.flush).pipe(
        Effect.provide(UsageRecorder.layerWith({ capacity: 1_000, batchSize: 100, flushEvery: "10 seconds" })),
        Effect.provide(journalAt(dir)),
        Effect.provide(Logger.remove(Logger.defaultLogger))
      )
      const stored = yield* Effect.map(MemoryUsage, (store) => [...(store.workspaces.get(WORKSPACE)?.requests.values() ?? [])])
      const byRequest = new Map(stored.map((row) => [row.requestId, row]))
      expect(byRequest.get("req_old")).toMatchObject({ recordId: older.recordId, byok: false, deployment: undefined })
      expect(byRequest.get("req_new")).toMatchObject({ recordId: current.recordId, byok: false, deployment: "eu-primary" })
      expect(stored).toHaveLength(2)
      expect(segmentLines(dir)).toEqual([])
    }).pipe(Effect.provide(Layer.merge(UsageLedger.memory, Metrics.none))))
})
