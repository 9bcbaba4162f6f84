import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { MetricFamily } from "../../src/domain/prometheusText"
import { processMetrics } from "../../src/platform/processMetrics"

const lagOf = (read: () => ReadonlyArray<MetricFamily>): Record<string, number> => {
  const family = read().find((f) => f.name === "wsapi_event_loop_lag_seconds")
  return family === undefined || family.type === "histogram"
    ? {}
    : Object.fromEntries(family.series.map((s) => [s.labels.quantile ?? "", s.value]))
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("the process's event-loop lag", () => {
  it("reads near zero on an idle loop (not the sampling interval) and shows a blocked loop", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const read = yield* processMetrics
      yield* Effect.promise(async () => {
        lagOf(read) // resets the histogram
        await sleep(200)
        const idle = lagOf(read)
        expect(idle["0.5"]).toBeLessThan(0.005)
        await sleep(60) // Node's histogram starts counting from its first sample after a reset
        const until = Date.now() + 150
        while (Date.now() < until) {
          // blocks the loop
        }
        await sleep(60)
        expect(lagOf(read)["1"]).toBeGreaterThan(0.1)
      })
    })))
  })
})
