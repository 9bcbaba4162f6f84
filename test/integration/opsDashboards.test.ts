import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { parsePrometheusText } from "../support/prometheusText"
import { useApp } from "../support/app"

const root = path.resolve(import.meta.dirname, "../..")

interface Panel {
  readonly type: string
  readonly title: string
  readonly targets?: ReadonlyArray<{ readonly expr: string }>
  readonly panels?: ReadonlyArray<Panel>
}

/** Every PromQL expression of the dashboard's panels (rows' nested panels included). */
const dashboardExpressions = (): ReadonlyArray<string> => {
  const dashboard = JSON.parse(fs.readFileSync(path.join(root, "ops/grafana/workspace-api.json"), "utf8")) as {
    readonly panels: ReadonlyArray<Panel>
    readonly templating: { readonly list: ReadonlyArray<{ readonly definition?: string }> }
  }
  const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])])
  return [
    ...panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
    ...dashboard.templating.list.flatMap((variable) => (variable.definition === undefined ? [] : [variable.definition]))
  ]
}

/** Every rule expression of the example alerts. */
const alertExpressions = (): ReadonlyArray<string> => {
  const rules = parse(fs.readFileSync(path.join(root, "ops/prometheus/alerts.yml"), "utf8")) as {
    readonly groups: ReadonlyArray<{ readonly name: string; readonly rules: ReadonlyArray<{ readonly alert: string; readonly expr: string; readonly for?: string }> }>
  }
  return rules.groups.flatMap((group) => group.rules.map((rule) => rule.expr))
}

const metricNames = (expressions: ReadonlyArray<string>): ReadonlySet<string> =>
  new Set(expressions.flatMap((expression) => [...expression.matchAll(/\bwsapi_[a-z0-9_]+/g)].map((match) => match[0])))

describe("the Grafana dashboard and the example alert rules", () => {
  // A real service (PostgreSQL, so the database pool's gauges are there too).
  const app = useApp({}, { stores: "postgres" })

  it("reference only metrics that /metrics exports, so they cannot drift apart", async () => {
    const scraped = parsePrometheusText(await (await fetch(`${app.current.url}/metrics`)).text())
    const exported = new Set([...scraped.types].flatMap(([name, type]) =>
      type === "histogram" ? [name, `${name}_bucket`, `${name}_sum`, `${name}_count`] : [name]
    ))
    const dashboard = metricNames(dashboardExpressions())
    const alerts = metricNames(alertExpressions())
    expect(dashboard.size).toBeGreaterThan(10)
    expect(alerts.size).toBeGreaterThan(5)
    expect([...dashboard].filter((name) => !exported.has(name))).toEqual([])
    expect([...alerts].filter((name) => !exported.has(name))).toEqual([])
  })

  it("cover what the issue asks to see: traffic, errors, latency and first byte, tokens, cost, refusals, queue depth", () => {
    const dashboard = metricNames(dashboardExpressions())
    for (const name of [
      "wsapi_http_requests_total",
      "wsapi_upstream_duration_seconds_bucket",
      "wsapi_upstream_first_byte_seconds_bucket",
      "wsapi_tokens_total",
      "wsapi_cost_usd_total",
      "wsapi_rate_limited_total",
      "wsapi_usage_records_pending"
    ]) expect([name, dashboard.has(name)]).toEqual([name, true])
  })
})
