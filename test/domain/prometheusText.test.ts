import { describe, expect, it } from "vitest"
import { renderPrometheusText } from "../../src/domain/prometheusText"
import { parsePrometheusText } from "../support/prometheusText"

describe("the Prometheus text format", () => {
  it("renders counters, gauges and histograms (buckets, sum, count) with escaped labels", () => {
    const text = renderPrometheusText([
      { type: "counter", name: "x_total", help: "Things\ncounted.", series: [{ labels: { family: "a\"b\\c" }, value: 3 }] },
      { type: "gauge", name: "y", help: "A level.", series: [{ labels: {}, value: 1.5 }] },
      {
        type: "histogram",
        name: "z_seconds",
        help: "Times.",
        series: [{ labels: { provider: "provider_a" }, value: { buckets: [[0.1, 1], [1, 3], [Infinity, 4]], count: 4, sum: 7.25 } }]
      }
    ])
    expect(text).toBe([
      "# HELP x_total Things\\ncounted.",
      "# TYPE x_total counter",
      'x_total{family="a\\"b\\\\c"} 3',
      "# HELP y A level.",
      "# TYPE y gauge",
      "y 1.5",
      "# HELP z_seconds Times.",
      "# TYPE z_seconds histogram",
      'z_seconds_bucket{provider="provider_a",le="0.1"} 1',
      'z_seconds_bucket{provider="provider_a",le="1"} 3',
      'z_seconds_bucket{provider="provider_a",le="+Inf"} 4',
      'z_seconds_sum{provider="provider_a"} 7.25',
      'z_seconds_count{provider="provider_a"} 4',
      ""
    ].join("\n"))
    const parsed = parsePrometheusText(text)
    expect(parsed.sum("x_total", { family: "a\"b\\c" })).toBe(3)
    expect(parsed.sum("z_seconds_bucket", { le: "+Inf" })).toBe(4)
  })
})
