import ProviderAClient from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../support/fakeUpstream"
import { type MemoryApp, startApp, useApp, call, createKey, createWorkspace } from "../support/app"
import { parsePrometheusText, type Scrape } from "../support/prometheusText"

const user = (content: string) => [{ role: "user" as const, content }]

const scrape = async (app: MemoryApp, token?: string): Promise<Scrape> => {
  const answer = await fetch(`${app.url}/metrics`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })
  expect(answer.status).toBe(200)
  expect(answer.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return parsePrometheusText(await answer.text())
}

/** The metrics DESIGN.md ("Metrics and traces") names, and the rest docs/operations.md lists. */
const declared = [
  ["wsapi_http_requests_total", "counter"],
  ["wsapi_upstream_duration_seconds", "histogram"],
  ["wsapi_upstream_first_byte_seconds", "histogram"],
  ["wsapi_tokens_total", "counter"],
  ["wsapi_cost_usd_total", "counter"],
  ["wsapi_rate_limited_total", "counter"],
  ["wsapi_usage_records_pending", "gauge"],
  ["wsapi_usage_records_dropped_total", "counter"],
  ["wsapi_usage_records_dead_lettered_total", "counter"],
  ["wsapi_export_duration_seconds", "histogram"],
  ["wsapi_process_resident_memory_bytes", "gauge"],
  ["wsapi_process_heap_used_bytes", "gauge"],
  ["wsapi_process_cpu_seconds_total", "counter"],
  ["wsapi_event_loop_lag_seconds", "gauge"]
] as const

describe("GET /metrics on the in-memory app", () => {
  const app = useApp()
  let workspaceId = ""
  let key = ""
  let limitedKey = ""

  beforeAll(async () => {
    workspaceId = (await createWorkspace(app.current)).id
    key = (await createKey(app.current, workspaceId, ["COMPLETION_API", "USAGE_EXPORT_API"])).key
    const limited = await createWorkspace(app.current, "Limited", { rateLimits: { families: { chat_completions: { requestsPerMinute: 1 } } } })
    limitedKey = (await createKey(app.current, limited.id, ["COMPLETION_API"])).key
  })

  it("declares every metric of the design, in a well-formed exposition", async () => {
    const { types } = await scrape(app.current)
    for (const [name, type] of declared) expect([name, types.get(name)]).toEqual([name, type])
  })

  it("counts forwarded requests, upstream timings, tokens and cost by provider and region, without a workspace label", async () => {
    const before = await scrape(app.current)
    const client = new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
    const completion = await client.chat.completions.create({ model: "chatgen-4o-mini", messages: user("Say something kind.") })
    const stream = await client.chat.completions.create({ model: "chatgen-4o-mini", messages: user("Say something kind."), stream: true, stream_options: { include_usage: true } })
    for await (const _ of stream) { /* read to the end */ }
    const after = await eventually(() => scrape(app.current), (s) => s.sum("wsapi_upstream_duration_seconds_count", { provider: "provider_a", region: "eu" }) >= before.sum("wsapi_upstream_duration_seconds_count", { provider: "provider_a", region: "eu" }) + 2)
    const delta = (name: string, labels: Record<string, string>) => after.sum(name, labels) - before.sum(name, labels)
    expect(delta("wsapi_http_requests_total", { family: "chat_completions", status: "200" })).toBe(2)
    expect(delta("wsapi_upstream_first_byte_seconds_count", { provider: "provider_a", region: "eu" })).toBe(2)
    expect(delta("wsapi_upstream_duration_seconds_bucket", { provider: "provider_a", region: "eu", le: "+Inf" })).toBe(2)
    expect(delta("wsapi_tokens_total", { family: "chat_completions", direction: "input" })).toBeGreaterThanOrEqual(completion.usage!.prompt_tokens)
    expect(delta("wsapi_tokens_total", { family: "chat_completions", direction: "output" })).toBeGreaterThanOrEqual(completion.usage!.completion_tokens)
    expect(delta("wsapi_cost_usd_total", { family: "chat_completions", provider: "provider_a" })).toBeGreaterThan(0)
    expect(after.samples.some((sample) => "workspace" in sample.labels)).toBe(false)
  })

  it("counts refusals by the rate limits, and requests the HttpApi app answers by family", async () => {
    const before = await scrape(app.current)
    const client = new ProviderAClient({ apiKey: limitedKey, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
    await client.chat.completions.create({ model: "chatgen-4o-mini", messages: user("one") })
    const refused = await client.chat.completions.create({ model: "chatgen-4o-mini", messages: user("two") }).then(() => 200, (error: { status: number }) => error.status)
    expect(refused).toBe(429)
    expect((await call(app.current, "GET", "/healthz")).status).toBe(200)
    const after = await scrape(app.current)
    expect(after.sum("wsapi_rate_limited_total", { family: "chat_completions" }) - before.sum("wsapi_rate_limited_total", { family: "chat_completions" })).toBe(1)
    expect(after.sum("wsapi_http_requests_total", { family: "chat_completions", status: "429" }) - before.sum("wsapi_http_requests_total", { family: "chat_completions", status: "429" })).toBe(1)
    expect(after.sum("wsapi_http_requests_total", { family: "operations", status: "200" })).toBeGreaterThan(before.sum("wsapi_http_requests_total", { family: "operations", status: "200" }))
  })

  it("times exports by kind and outcome, and reads the usage queue and the process at each scrape", async () => {
    const exported = await call(app.current, "POST", "/export/models", { token: key, body: { from: { date: "2020-01-01", timezone: "UTC" }, to: { date: "2099-12-31", timezone: "UTC" } } })
    expect([200, 400, 404]).toContain(exported.status)
    const after = await scrape(app.current)
    expect(after.sum("wsapi_export_duration_seconds_count", { kind: "models" })).toBeGreaterThanOrEqual(1)
    expect(after.samples.find((sample) => sample.name === "wsapi_usage_records_pending")?.value).toBeGreaterThanOrEqual(0)
    expect(after.sum("wsapi_process_resident_memory_bytes")).toBeGreaterThan(10_000_000)
    expect(after.samples.filter((sample) => sample.name === "wsapi_event_loop_lag_seconds").map((sample) => sample.labels.quantile)).toEqual(["0.5", "0.99", "1"])
  })
})

describe("GET /metrics settings", () => {
  const running: Array<MemoryApp> = []
  afterAll(() => Promise.all(running.map((app) => app.stop())))
  const start = async (env: Record<string, string>) => {
    const app = await startApp(env)
    running.push(app)
    return app
  }

  it("asks for METRICS_TOKEN as a bearer when it is set", async () => {
    const app = await start({ METRICS_TOKEN: "metrics-token-0123456789" })
    expect((await fetch(`${app.url}/metrics`)).status).toBe(401)
    expect((await fetch(`${app.url}/metrics`, { headers: { authorization: "Bearer metrics-token-wrong-000" } })).status).toBe(401)
    expect((await scrape(app, "metrics-token-0123456789")).types.get("wsapi_http_requests_total")).toBe("counter")
  })

  it("lives under BASE_PATH, and counts requests by family below it", async () => {
    const app = await start({ BASE_PATH: "/api/public" })
    expect(app.url).toMatch(/\/api\/public$/)
    expect((await fetch(`${app.origin}/metrics`)).status).toBe(404)
    expect((await call(app, "GET", "/healthz")).status).toBe(200)
    expect((await scrape(app)).sum("wsapi_http_requests_total", { family: "operations", status: "200" })).toBeGreaterThanOrEqual(1)
  })

  it("answers 404 and counts nothing under METRICS=off", async () => {
    const app = await start({ METRICS: "off" })
    expect((await fetch(`${app.url}/metrics`)).status).toBe(404)
  })

  it("labels usage and refusals by workspace only under METRICS_WORKSPACE_LABELS=true", async () => {
    const app = await start({ METRICS_WORKSPACE_LABELS: "true" })
    const workspace = await createWorkspace(app)
    const { key } = await createKey(app, workspace.id, ["COMPLETION_API"])
    const client = new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 })
    await client.chat.completions.create({ model: "chatgen-4o-mini", messages: user("hello") })
    const after = await eventually(() => scrape(app), (s) => s.sum("wsapi_tokens_total", { workspace: workspace.id }) > 0)
    expect(after.sum("wsapi_tokens_total", { family: "chat_completions", direction: "input", workspace: workspace.id })).toBeGreaterThan(0)
    // Requests stay by family and status: their count is the one an operator alerts on.
    expect(after.samples.filter((sample) => sample.name === "wsapi_http_requests_total").every((sample) => !("workspace" in sample.labels))).toBe(true)
  })
})
