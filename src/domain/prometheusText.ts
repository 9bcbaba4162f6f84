/**
 * The Prometheus text exposition format (version 0.0.4), from metric values read at scrape time:
 * what GET /metrics answers. Pure: the Metrics service gathers the values (Effect's MetricHook
 * states and sampled gauges) and this renders them.
 */

export const prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

export type Labels = Readonly<Record<string, string>>

/** One histogram's state: cumulative counts per upper bound (the last +Inf), count and sum. */
export interface HistogramValue {
  readonly buckets: ReadonlyArray<readonly [number, number]>
  readonly count: number
  readonly sum: number
}

export type MetricFamily =
  | {
    readonly type: "counter" | "gauge"
    readonly name: string
    readonly help: string
    readonly series: ReadonlyArray<{ readonly labels: Labels; readonly value: number }>
  }
  | {
    readonly type: "histogram"
    readonly name: string
    readonly help: string
    readonly series: ReadonlyArray<{ readonly labels: Labels; readonly value: HistogramValue }>
  }

/** Label values and help text escape backslash, newline (and, in label values, the double quote). */
const escapeLabel = (value: string): string => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, "\\\"")
const escapeHelp = (value: string): string => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const number = (value: number): string =>
  Number.isNaN(value) ? "NaN" : value === Infinity ? "+Inf" : value === -Infinity ? "-Inf" : String(value)

const labelText = (labels: Labels, extra?: readonly [string, string]): string => {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabel(value)}"`)
  if (extra !== undefined) pairs.push(`${extra[0]}="${escapeLabel(extra[1])}"`)
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`
}

/** Every family with its HELP and TYPE lines, then one line per series (histograms: buckets, sum, count). */
export const renderPrometheusText = (families: ReadonlyArray<MetricFamily>): string => {
  const lines: Array<string> = []
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`)
    if (family.type !== "histogram") {
      for (const { labels, value } of family.series) lines.push(`${family.name}${labelText(labels)} ${number(value)}`)
      continue
    }
    for (const { labels, value } of family.series) {
      for (const [bound, count] of value.buckets) {
        lines.push(`${family.name}_bucket${labelText(labels, ["le", number(bound)])} ${count}`)
      }
      lines.push(`${family.name}_sum${labelText(labels)} ${number(value.sum)}`, `${family.name}_count${labelText(labels)} ${value.count}`)
    }
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`
}
