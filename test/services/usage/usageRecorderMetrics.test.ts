/** What the UsageRecorder shows at /metrics: its queue, the records it dropped and those the ledger refused. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Metrics } from "../../../src/platform/Metrics"
import { UsageJournal } from "../../../src/services/usage/2-UsageJournal"
import { UsageLedger } from "../../../src/services/usage/3-UsageLedger/index"
import { UsageRecorder } from "../../../src/services/usage/1-UsageRecorder"
import { parsePrometheusText } from "../../support/prometheusText"
import { requestRecord } from "../../support/requestRecord"

const WORKSPACE = "6f1c2b3a-0000-4000-8000-000000000002"

const recorder = (capacity: number) =>
  UsageRecorder.layerWith({ capacity, batchSize: 100, flushEvery: "10 seconds" }).pipe(
    Layer.provide([UsageJournal.none, UsageLedger.memory]),
    Layer.provideMerge(Metrics.layerWith({ workspaceLabels: false }))
  )

const scrape = Effect.flatMap(Metrics, (metrics) => Effect.map(metrics.render, parsePrometheusText))

describe("the usage recorder's metrics", () => {
  it.effect("reads the queue depth at each scrape and counts records dropped and dead-lettered", () =>
    Effect.gen(function*() {
      const usage = yield* UsageRecorder
      for (let i = 1; i <= 5; i++) yield* usage.record(requestRecord({ workspaceId: WORKSPACE, requestId: `req_${i}` }))
      // Capacity 3 and no journal: the two oldest are dropped.
      let scraped = yield* scrape
      expect(scraped.sum("wsapi_usage_records_pending")).toBe(3)
      expect(scraped.sum("wsapi_usage_records_dropped_total")).toBe(2)
      expect(scraped.sum("wsapi_usage_records_dead_lettered_total")).toBe(0)
      yield* usage.record(requestRecord({ workspaceId: WORKSPACE, requestId: "req_bad", inputTokens: 5.5 }))
      yield* usage.flush
      scraped = yield* scrape
      expect(scraped.sum("wsapi_usage_records_pending")).toBe(0)
      expect(scraped.sum("wsapi_usage_records_dead_lettered_total")).toBe(1)
    }).pipe(Effect.provide(recorder(3))))
})
