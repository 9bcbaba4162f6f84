import { Effect, type Scope } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"
import type { MetricFamily } from "../domain/prometheusText"

/**
 * The process's own measures, read at scrape time: CPU, memory, and event-loop lag. The lag is
 * Node's event-loop delay histogram (sampled every 20 ms by Node itself, no timer of ours), reported
 * as quantiles of the time since the previous scrape, then reset.
 */
/** How often Node samples the loop. Its histogram records the time between samples, this included. */
const samplingMs = 20

export const processMetrics: Effect.Effect<() => ReadonlyArray<MetricFamily>, never, Scope.Scope> = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => {
      const delay = monitorEventLoopDelay({ resolution: samplingMs })
      delay.enable()
      return delay
    }),
    (delay) => Effect.sync(() => delay.disable())
  ),
  (delay) => {
    const startedAt = Math.round(Date.now() / 1000 - process.uptime())
    const gauge = (name: string, help: string, value: number): MetricFamily => ({ type: "gauge", name, help, series: [{ labels: {}, value }] })
    return () => {
      const memory = process.memoryUsage()
      const cpu = process.cpuUsage()
      // Nanoseconds between samples, so an idle loop reads as the sampling interval: the lag is what
      // exceeds it. No sample yet (a fresh histogram) reads as NaN, shown as 0.
      const lag = (nanos: number) => (Number.isFinite(nanos) ? Math.max(0, nanos / 1e9 - samplingMs / 1e3) : 0)
      const families: ReadonlyArray<MetricFamily> = [
        { type: "counter", name: "wsapi_process_cpu_seconds_total", help: "CPU time of the process, user and system.", series: [{ labels: {}, value: (cpu.user + cpu.system) / 1e6 }] },
        gauge("wsapi_process_resident_memory_bytes", "Resident set size of the process.", memory.rss),
        gauge("wsapi_process_heap_used_bytes", "V8 heap in use.", memory.heapUsed),
        gauge("wsapi_process_heap_total_bytes", "V8 heap reserved.", memory.heapTotal),
        gauge("wsapi_process_external_memory_bytes", "Memory of buffers and other objects outside the V8 heap.", memory.external),
        gauge("wsapi_process_start_time_seconds", "Start of the process, in seconds since the Unix epoch.", startedAt),
        {
          type: "gauge",
          name: "wsapi_event_loop_lag_seconds",
          help: "Event-loop delay since the previous scrape, by quantile.",
          series: [
            { labels: { quantile: "0.5" }, value: lag(delay.percentile(50)) },
            { labels: { quantile: "0.99" }, value: lag(delay.percentile(99)) },
            { labels: { quantile: "1" }, value: lag(delay.max) }
          ]
        }
      ]
      delay.reset()
      return families
    }
  }
)
