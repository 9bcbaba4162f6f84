/**
 * UsageRecorder over UsageLedger.memory: the same queue, batching, idempotency and bisecting of a
 * refused batch as on PostgreSQL (test/integration/usageRecorder.test.ts), without a database.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { Metrics } from "../../../src/platform/Metrics"
import { UsageJournal } from "../../../src/services/usage/2-UsageJournal"
import { MemoryUsage, UsageLedger } from "../../../src/services/usage/3-UsageLedger/index"
import { type ApiRequestRecord, UsageRecorder } from "../../../src/services/usage/1-UsageRecorder"
import { requestRecord } from "../../support/requestRecord"

const WORKSPACE = "6f1c2b3a-0000-4000-8000-000000000001"

const record = (i: number, fields: Partial<ApiRequestRecord> = {}): ApiRequestRecord =>
  requestRecord({ workspaceId: WORKSPACE, inputTokens: i, outputTokens: 2 * i, requestId: `req_${i}`, ...fields })

const recorderOnMemory = (batchSize: number) =>
  UsageRecorder.layerWith({ capacity: 1_000, batchSize, flushEvery: "10 seconds" }).pipe(
    Layer.provide(UsageJournal.none),
    Layer.provide(Metrics.none),
    Layer.provideMerge(UsageLedger.memory)
  )

const stored = Effect.map(MemoryUsage, (store) => [...(store.workspaces.get(WORKSPACE)?.requests.values() ?? [])].map((r) => r.requestId))

describe("UsageRecorder over the in-memory ledger", () => {
  it.effect("writes what it queued in batches, each record once, whatever is flushed again", () =>
    Effect.gen(function*() {
      const recorder = yield* UsageRecorder
      const again = record(0)
      yield* recorder.record(again)
      for (let i = 1; i <= 25; i++) yield* recorder.record(record(i))
      expect(yield* recorder.pending).toBe(26)
      yield* recorder.flush
      yield* recorder.record(again)
      yield* recorder.flush
      expect(yield* recorder.pending).toBe(0)
      expect(yield* stored).toEqual(Array.from({ length: 26 }, (_, i) => `req_${i}`))
    }).pipe(Effect.provide(recorderOnMemory(7))))

  it.effect("splits a refused batch down to the poisoned records and dead-letters them with the reason", () => {
    const logged: Array<string> = []
    const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logged.push(String(message))))
    return Effect.gen(function*() {
      const recorder = yield* UsageRecorder
      const poisoned = new Map([[5, record(5, { outputTokens: 1e10 })], [11, record(11, { inputTokens: 5.5 })]])
      for (let i = 1; i <= 20; i++) yield* recorder.record(poisoned.get(i) ?? record(i))
      yield* recorder.flush
      expect([...(yield* stored)].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `req_${i + 1}`).filter((id) => id !== "req_5" && id !== "req_11").sort())
      const dead = [...(yield* MemoryUsage).deadLetters.values()]
      expect(dead.map((d) => JSON.parse(d.record).requestId).sort()).toEqual(["req_11", "req_5"])
      expect(dead.find((d) => d.recordId === poisoned.get(5)!.recordId)!.error).toMatch(/^22003/)
      expect(dead.find((d) => d.recordId === poisoned.get(11)!.recordId)!.error).toMatch(/^22P02/)
      expect(logged.some((line) => line.includes("split to isolate the bad record"))).toBe(true)
      expect(logged.filter((line) => line.includes("dead_letter"))).toHaveLength(2)
    }).pipe(Effect.provide(recorderOnMemory(100)), Effect.provide(capture))
  })
})
