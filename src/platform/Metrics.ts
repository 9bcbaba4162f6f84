import { Context, Effect, Layer, MetricBoundaries, MetricHook, MetricKey } from "effect"
import { AppConfig } from "../config"
import { type HistogramValue, type Labels, type MetricFamily, renderPrometheusText } from "../domain/prometheusText"
import { processMetrics } from "./processMetrics"

/** One forwarded request's usage, as the Forwarder records it. */
export interface UsageMeasure {
  readonly family: string
  readonly provider: string
  readonly workspaceId: string
  readonly inputTokens: number
  readonly outputTokens: number
  readonly costUsd: number
}

/** A gauge's series read at scrape time: one value, or values by label. */
export type GaugeReading = number | ReadonlyArray<{ readonly labels: Labels; readonly value: number }>

/**
 * The measures of the service, exported at GET /metrics in the Prometheus text format. The recording
 * calls are plain functions, not effects: they run on the hot path (the forwarding lane's Node
 * callbacks among them) and cost one map lookup and one counter or histogram update each, nothing more.
 * Gauges (queue depth, pool use, memory) cost nothing between scrapes: they are read when scraped.
 */
export interface MetricsShape {
  /** False under METRICS=off: every call below does nothing and /metrics answers 404. */
  readonly enabled: boolean
  readonly request: (family: string, status: number) => void
  /** From the request sent upstream to the answer's status and headers. */
  readonly upstreamFirstByte: (provider: string, region: string, deployment: string, seconds: number) => void
  /** From the request sent upstream to the end of its answer (or its failure). */
  readonly upstreamDuration: (provider: string, region: string, deployment: string, seconds: number) => void
  readonly usage: (measure: UsageMeasure) => void
  /** A request refused by the workspace's rate limits (429). */
  readonly rateLimited: (family: string, workspaceId: string) => void
  readonly usageRecordsDropped: (count: number) => void
  readonly usageRecordsDeadLettered: (count: number) => void
  readonly exportFinished: (kind: string, outcome: "succeeded" | "failed", seconds: number) => void
  /** Registers a gauge read at each scrape. */
  readonly gauge: (name: string, help: string, read: () => GaugeReading) => Effect.Effect<void>
  /** Every measure in the Prometheus text format. */
  readonly render: Effect.Effect<string>
}

/** A level of a labelled measure's series: by the next label's value, then the series its values make. */
interface SeriesNode<H> {
  next: Map<string, SeriesNode<H>> | undefined
  made: { readonly labels: Labels; readonly hook: H } | undefined
}

/**
 * Series of one labelled counter or histogram, made on first use and kept (label values are bounded sets). Found
 * label value by label value: no key is built on the hot path.
 */
const labelled = <H extends MetricHook.MetricHook<number, unknown>>(labelNames: ReadonlyArray<string>, make: () => H) => {
  const root: SeriesNode<H> = { next: undefined, made: undefined }
  const series: Array<{ readonly labels: Labels; readonly hook: H }> = []
  return {
    at: (values: ReadonlyArray<string>): H => {
      let node = root
      for (let i = 0; i < labelNames.length; i++) {
        const value = values[i] ?? ""
        node.next ??= new Map()
        let child = node.next.get(value)
        if (child === undefined) {
          child = { next: undefined, made: undefined }
          node.next.set(value, child)
        }
        node = child
      }
      if (node.made !== undefined) return node.made.hook
      const labels = Object.fromEntries(labelNames.map((name, i) => [name, values[i] ?? ""]))
      node.made = { labels, hook: make() }
      series.push(node.made)
      return node.made.hook
    },
    series: (): ReadonlyArray<{ readonly labels: Labels; readonly hook: H }> => series
  }
}

const counter = (name: string, help: string, labelNames: ReadonlyArray<string>) => {
  const children = labelled(labelNames, () => MetricHook.counter(MetricKey.counter(name)))
  return {
    inc: (values: ReadonlyArray<string>, by = 1) => children.at(values).update(by),
    family: (): MetricFamily => ({
      type: "counter",
      name,
      help,
      series: children.series().map(({ hook, labels }) => ({ labels, value: hook.get().count }))
    })
  }
}

const histogram = (name: string, help: string, labelNames: ReadonlyArray<string>, bounds: ReadonlyArray<number>) => {
  const boundaries = MetricBoundaries.fromIterable(bounds)
  const children = labelled(labelNames, () => MetricHook.histogram(MetricKey.histogram(name, boundaries)))
  return {
    observe: (values: ReadonlyArray<string>, value: number) => children.at(values).update(value),
    family: (): MetricFamily => ({
      type: "histogram",
      name,
      help,
      series: children.series().map(({ hook, labels }) => {
        const { buckets, count, sum } = hook.get()
        return { labels, value: { buckets, count, sum } satisfies HistogramValue }
      })
    })
  }
}

/** Seconds: upstream answers take from tens of milliseconds to minutes (long streams). */
const upstreamBounds = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]
const firstByteBounds = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const exportBounds = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]

const noop = () => {}

export class Metrics extends Context.Tag("Metrics")<Metrics, MetricsShape>() {
  /** Nothing measured (METRICS=off). */
  static readonly none = Layer.succeed(Metrics, {
    enabled: false,
    request: noop,
    upstreamFirstByte: noop,
    upstreamDuration: noop,
    usage: noop,
    rateLimited: noop,
    usageRecordsDropped: noop,
    usageRecordsDeadLettered: noop,
    exportFinished: noop,
    gauge: () => Effect.void,
    render: Effect.succeed("")
  })

  /**
   * Measures kept in this process (Effect's MetricHook values, owned by this layer rather than the
   * global registry, so that two apps in one test process do not share them). With
   * `workspaceLabels`, usage and refusals carry the workspace id: one series per workspace.
   */
  static readonly layerWith = (options: { readonly workspaceLabels: boolean }) =>
    Layer.scoped(
      Metrics,
      Effect.gen(function*() {
        const byWorkspace = options.workspaceLabels
        const withWorkspace = (names: ReadonlyArray<string>) => (byWorkspace ? [...names, "workspace"] : names)
        const requests = counter("wsapi_http_requests_total", "Requests answered, by route family and status.", ["family", "status"])
        const firstByte = histogram(
          "wsapi_upstream_first_byte_seconds",
          "Time from sending a request upstream to its answer's status and headers.",
          ["provider", "region", "deployment"],
          firstByteBounds
        )
        const duration = histogram(
          "wsapi_upstream_duration_seconds",
          "Time from sending a request upstream to the end of its answer.",
          ["provider", "region", "deployment"],
          upstreamBounds
        )
        const tokens = counter("wsapi_tokens_total", "Tokens of forwarded requests, by family and direction (input or output).", withWorkspace(["family", "direction"]))
        const cost = counter("wsapi_cost_usd_total", "Cost of forwarded requests in US dollars, from the price table.", withWorkspace(["family", "provider"]))
        const rateLimited = counter("wsapi_rate_limited_total", "Requests refused by a workspace's rate limits.", withWorkspace(["family"]))
        const dropped = counter("wsapi_usage_records_dropped_total", "Usage records dropped: queue full and no journal.", [])
        const deadLettered = counter("wsapi_usage_records_dead_lettered_total", "Usage records the ledger refused, kept in api_requests_dead_letter.", [])
        const exports = histogram("wsapi_export_duration_seconds", "Time to run a usage export, by kind and outcome.", ["kind", "outcome"], exportBounds)
        const gauges: Array<{ readonly name: string; readonly help: string; readonly read: () => GaugeReading }> = []
        const processFamilies = yield* processMetrics
        const none: ReadonlyArray<string> = []
        // Shown at 0 from the start: an alert on their increase needs a series to compare with.
        dropped.inc(none, 0)
        deadLettered.inc(none, 0)

        return {
          enabled: true,
          request: (family, status) => requests.inc([family, String(status)]),
          upstreamFirstByte: (provider, region, deployment, seconds) => firstByte.observe([provider, region, deployment], seconds),
          upstreamDuration: (provider, region, deployment, seconds) => duration.observe([provider, region, deployment], seconds),
          // The labels as literals, no spread: this runs for every forwarded request.
          usage: ({ costUsd, family, inputTokens, outputTokens, provider, workspaceId }) => {
            if (inputTokens > 0) tokens.inc(byWorkspace ? [family, "input", workspaceId] : [family, "input"], inputTokens)
            if (outputTokens > 0) tokens.inc(byWorkspace ? [family, "output", workspaceId] : [family, "output"], outputTokens)
            if (costUsd > 0) cost.inc(byWorkspace ? [family, provider, workspaceId] : [family, provider], costUsd)
          },
          rateLimited: (family, workspaceId) => rateLimited.inc(byWorkspace ? [family, workspaceId] : [family]),
          usageRecordsDropped: (count) => dropped.inc(none, count),
          usageRecordsDeadLettered: (count) => deadLettered.inc(none, count),
          exportFinished: (kind, outcome, seconds) => exports.observe([kind, outcome], seconds),
          gauge: (name, help, read) => Effect.sync(() => void gauges.push({ name, help, read })),
          render: Effect.sync(() =>
            renderPrometheusText([
              requests.family(),
              firstByte.family(),
              duration.family(),
              tokens.family(),
              cost.family(),
              rateLimited.family(),
              dropped.family(),
              deadLettered.family(),
              exports.family(),
              ...gauges.map(({ help, name, read }): MetricFamily => {
                const reading = read()
                return { type: "gauge", name, help, series: typeof reading === "number" ? [{ labels: {}, value: reading }] : reading }
              }),
              ...processFamilies()
            ])
          )
        } satisfies MetricsShape
      })
    )

  /** Measured unless METRICS=off. */
  static readonly fromConfig = Layer.unwrapEffect(
    Effect.map(AppConfig, ({ metrics }) => (metrics.enabled ? Metrics.layerWith({ workspaceLabels: metrics.workspaceLabels }) : Metrics.none))
  )
}
