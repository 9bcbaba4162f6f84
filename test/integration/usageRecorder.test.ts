import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Logger, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { runMigrations } from "../../src/platform/Migrations"
import { Metrics } from "../../src/platform/Metrics"
import { UsageJournal } from "../../src/services/usage/2-UsageJournal"
import { UsageLedger } from "../../src/services/usage/3-UsageLedger/index"
import { type ApiRequestRecord, UsageRecorder, type UsageRecorderOptions } from "../../src/services/usage/1-UsageRecorder"
import { freshDatabaseUrl } from "../support/database"
import { requestRecord } from "../support/requestRecord"
import { tempDir } from "../support/tempDirs"

const record = (i: number, workspaceId: string, fields: Partial<ApiRequestRecord> = {}): ApiRequestRecord =>
  requestRecord({ workspaceId, inputTokens: i, outputTokens: 2 * i, requestId: `req_${i}`, ...fields })

/** A database whose api_requests table can be taken away and given back, as in an outage. */
const setup = async () => {
  const url = await freshDatabaseUrl()
  const Pg = PgClient.layer({ url: Redacted.make(url), maxConnections: 4 })
  const workspaceId = await Effect.runPromise(
    Effect.gen(function*() {
      yield* runMigrations()
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ id: string }>`INSERT INTO workspaces (name) VALUES ('w') RETURNING id`
      return row!.id
    }).pipe(Effect.provide(Pg), Effect.scoped)
  )
  const journalDir = tempDir("ws-journal-")
  return { Pg, workspaceId, journalDir }
}

const recorderWith = (journalDir: string, options: UsageRecorderOptions) =>
  UsageRecorder.layerWith(options).pipe(
    Layer.provide(UsageJournal.layerWith({ directory: journalDir, syncEvery: "20 millis", segmentBytes: 2_000 })),
    Layer.provide(UsageLedger.layer),
    Layer.provide(Metrics.none)
  )

const statement = (text: string) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
const requestIds = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ request_id: string }>`SELECT request_id FROM api_requests ORDER BY id`).pipe(Effect.map((rows) => rows.map((r) => r.request_id)))
const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `req_${from + i}`)
const segmentFiles = (dir: string) => fs.readdirSync(dir).filter((name) => name.endsWith(".jsonl"))

const capture = () => {
  const logged: Array<string> = []
  const layer = Logger.replace(Logger.defaultLogger, Logger.make(({ annotations, message }) => void logged.push(JSON.stringify({ message, annotations: [...annotations] }))))
  return { logged, layer }
}

describe("UsageRecorder against a real PostgreSQL", () => {
  it("keeps records through a database outage and writes them once it is back, in order, once each", async () => {
    const { Pg, workspaceId, journalDir } = await setup()
    await Effect.runPromise(
      Effect.gen(function*() {
        const recorder = yield* UsageRecorder
        yield* statement("ALTER TABLE api_requests RENAME TO api_requests_away")
        for (let i = 1; i <= 30; i++) yield* recorder.record(record(i, workspaceId))
        yield* Effect.sleep("1500 millis")
        yield* statement("ALTER TABLE api_requests_away RENAME TO api_requests")
        yield* recorder.flush
        expect(yield* requestIds).toEqual(ids(1, 30))
        const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ output_tokens: number }>`SELECT output_tokens FROM api_requests ORDER BY id`)
        expect(rows[4]!.output_tokens).toBe(10)
      }).pipe(
        Effect.provide(recorderWith(journalDir, { capacity: 1_000, batchSize: 7, flushEvery: "100 millis" }).pipe(Layer.provideMerge(Pg))),
        Effect.scoped
      )
    )
    // Everything is in the ledger: the journal has nothing left.
    expect(segmentFiles(journalDir)).toEqual([])
  }, 30_000)

  it("beyond its memory capacity keeps records in the journal only, and loses none of them", async () => {
    const { Pg, workspaceId, journalDir } = await setup()
    const { layer, logged } = capture()
    await Effect.runPromise(
      Effect.gen(function*() {
        yield* statement("ALTER TABLE api_requests RENAME TO api_requests_away")
        yield* Effect.scoped(
          Effect.gen(function*() {
            const recorder = yield* UsageRecorder
            for (let i = 1; i <= 200; i++) yield* recorder.record(record(i, workspaceId))
            expect(yield* recorder.pending).toBe(5)
            yield* Effect.sleep("300 millis")
            yield* statement("ALTER TABLE api_requests_away RENAME TO api_requests")
            yield* recorder.flush
          }).pipe(Effect.provide(recorderWith(journalDir, { capacity: 5, batchSize: 3, flushEvery: "10 seconds" })))
        )
        const written = yield* requestIds
        expect(written).toHaveLength(200)
        expect(new Set(written)).toEqual(new Set(ids(1, 200)))
      }).pipe(Effect.provide(Pg), Effect.provide(layer), Effect.scoped)
    )
    expect(logged.some((line) => line.includes("dropped"))).toBe(false)
    expect(segmentFiles(journalDir)).toEqual([])
  }, 30_000)

  it("without a journal drops the oldest records beyond its capacity, saying so, and flushes the rest on shutdown", async () => {
    const { Pg, workspaceId } = await setup()
    const { layer, logged } = capture()
    await Effect.runPromise(
      Effect.gen(function*() {
        yield* statement("ALTER TABLE api_requests RENAME TO api_requests_away")
        yield* Effect.scoped(
          Effect.gen(function*() {
            const recorder = yield* UsageRecorder
            for (let i = 1; i <= 8; i++) yield* recorder.record(record(i, workspaceId))
            yield* Effect.sleep("300 millis")
            yield* statement("ALTER TABLE api_requests_away RENAME TO api_requests")
            // Closing the scope is the shutdown: what is left is written then.
          }).pipe(Effect.provide(UsageRecorder.layerWith({ capacity: 5, batchSize: 100, flushEvery: "10 seconds" }).pipe(Layer.provide([UsageJournal.none, UsageLedger.layer, Metrics.none]))))
        )
        expect(yield* requestIds).toEqual(ids(4, 8))
      }).pipe(Effect.provide(Pg), Effect.provide(layer), Effect.scoped)
    )
    expect(logged.some((line) => line.includes("oldest records dropped"))).toBe(true)
  }, 30_000)

  it("splits a refused batch so that one poisoned record blocks no other, and dead-letters it with the error", async () => {
    const { Pg, workspaceId, journalDir } = await setup()
    const { layer, logged } = capture()
    await Effect.runPromise(
      Effect.gen(function*() {
        const recorder = yield* UsageRecorder
        const other = (yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ id: string }>`INSERT INTO workspaces (name) VALUES ('other') RETURNING id`))[0]!.id
        const poisoned = [
          // Out of every column's range, as an unchecked upstream figure would be.
          record(5, workspaceId, { outputTokens: 1e10 }),
          record(11, workspaceId, { inputTokens: 5.5 }),
          // A workspace that does not exist (a foreign key refusal).
          record(17, "00000000-0000-0000-0000-00000000dead")
        ]
        for (let i = 1; i <= 20; i++) {
          const bad = poisoned.find((p) => p.requestId === `req_${i}`)
          yield* recorder.record(bad ?? record(i, i % 2 === 0 ? other : workspaceId))
        }
        yield* recorder.flush
        const written = yield* requestIds
        expect([...written].sort()).toEqual(ids(1, 20).filter((id) => !["req_5", "req_11", "req_17"].includes(id)).sort())
        const dead = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ record_id: string; record: string; error: string }>`SELECT record_id, record, error FROM api_requests_dead_letter`)
        expect(dead.map((d) => JSON.parse(d.record).requestId).sort()).toEqual(["req_11", "req_17", "req_5"])
        expect(dead.every((d) => d.error.length > 0)).toBe(true)
        expect(dead.find((d) => JSON.parse(d.record).requestId === "req_17")!.error).toMatch(/^23503/)
      }).pipe(
        Effect.provide(recorderWith(journalDir, { capacity: 1_000, batchSize: 100, flushEvery: "10 seconds" }).pipe(Layer.provideMerge(Pg))),
        Effect.provide(layer),
        Effect.scoped
      )
    )
    expect(logged.some((line) => line.includes("split to isolate the bad record"))).toBe(true)
    expect(logged.filter((line) => line.includes("dead_letter"))).toHaveLength(3)
    expect(segmentFiles(journalDir)).toEqual([])
  }, 30_000)

  it("writes each record once, whatever flushes overlap, and ignores a record written again", async () => {
    const { Pg, workspaceId, journalDir } = await setup()
    await Effect.runPromise(
      Effect.gen(function*() {
        yield* Effect.scoped(
          Effect.gen(function*() {
            const recorder = yield* UsageRecorder
            const again = record(0, workspaceId)
            yield* recorder.record(again)
            for (let i = 1; i <= 300; i++) {
              yield* recorder.record(record(i, workspaceId))
              if (i % 50 === 0) yield* Effect.fork(recorder.flush)
            }
            yield* Effect.all([recorder.flush, recorder.flush, recorder.flush], { concurrency: "unbounded" })
            yield* recorder.record(again)
            // The scope closes with the periodic flush running: the shutdown flush comes after it.
          }).pipe(Effect.provide(recorderWith(journalDir, { capacity: 1_000, batchSize: 40, flushEvery: "1 millis" })))
        )
        const written = yield* requestIds
        expect(written).toHaveLength(301)
        expect(new Set(written).size).toBe(301)
      }).pipe(Effect.provide(Pg), Effect.scoped)
    )
  }, 30_000)

  it("replays at start-up what a previous run journaled and could not write, idempotently", async () => {
    const { Pg, workspaceId, journalDir } = await setup()
    const options = { capacity: 1_000, batchSize: 50, flushEvery: "100 millis" } as const
    await Effect.runPromise(
      Effect.gen(function*() {
        yield* statement("ALTER TABLE api_requests RENAME TO api_requests_away")
        // A first run writes 60 records while the ledger is away and stops: they stay in the journal.
        yield* Effect.scoped(
          Effect.gen(function*() {
            const recorder = yield* UsageRecorder
            for (let i = 1; i <= 60; i++) yield* recorder.record(record(i, workspaceId))
          }).pipe(Effect.provide(recorderWith(journalDir, options)))
        )
        expect(segmentFiles(journalDir).length).toBeGreaterThan(1)
        yield* statement("ALTER TABLE api_requests_away RENAME TO api_requests")
        // Some of them had reached the ledger before the crash: replay must not double them.
        const lines = segmentFiles(journalDir).flatMap((file) =>
          fs.readFileSync(path.join(journalDir, file), "utf8").split("\n").filter((l) => l !== "")
        )
        const early = JSON.parse(lines[0]!) as { recordId: string }
        yield* statement(`INSERT INTO api_requests (record_id, workspace_id, key_id, status, latency_ms, endpoint, provider, region, model, request_id)
          VALUES ('${early.recordId}', '${workspaceId}', '00000000-0000-0000-0000-000000000001', 200, 1, 'chat_completions', 'provider_a', 'eu', 'chatgen-4o', 'req_1')`)
        // A line cut short by a crash in the middle of a write is skipped.
        fs.appendFileSync(path.join(journalDir, segmentFiles(journalDir).at(-1)!), "{\"recordId\":\"cut sh")
        yield* Effect.scoped(
          Effect.gen(function*() {
            const recorder = yield* UsageRecorder
            yield* recorder.flush
          }).pipe(Effect.provide(recorderWith(journalDir, options)))
        )
        const written = yield* requestIds
        expect(written).toHaveLength(60)
        expect(new Set(written)).toEqual(new Set(ids(1, 60)))
      }).pipe(Effect.provide(Pg), Effect.scoped)
    )
    expect(segmentFiles(journalDir)).toEqual([])
  }, 60_000)
})
