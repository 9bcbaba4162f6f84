import { LogLevel } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { type MemoryApp, startApp } from "../support/app"
import { parsePrometheusText, type Scrape } from "../support/prometheusText"

const scrape = async (app: MemoryApp): Promise<Scrape> => parsePrometheusText(await (await fetch(`${app.url}/metrics`)).text())

/** The access lines (JSON, message "request") written to stdout while `run` runs. */
const accessLinesOf = async (run: () => Promise<void>): Promise<Array<{ readonly path: string; readonly status: number }>> => {
  const written: Array<string> = []
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    written.push(String(chunk))
    return true
  })
  try {
    await run()
  } finally {
    spy.mockRestore()
  }
  return written.flatMap((text) => text.split("\n")).flatMap((line) => {
    try {
      const parsed = JSON.parse(line)
      return parsed.message === "request" ? [parsed.annotations] : []
    } catch {
      return []
    }
  })
}

describe("requests outside BASE_PATH", () => {
  let app: MemoryApp
  beforeAll(async () => {
    app = await startApp({ BASE_PATH: "/api/public" }, { logLevel: LogLevel.Info })
  })
  afterAll(async () => {
    await app?.stop()
  })

  const outside: ReadonlyArray<readonly [method: string, path: string]> = [
    ["GET", "/favicon.ico"],
    ["GET", "/"],
    ["GET", "/wp-login.php"],
    ["GET", "/api/publicity"],
    ["POST", "/v1/chat/completions"],
    ["HEAD", "/.env"]
  ]

  it("are answered, logged and counted as the 404 they are, never as a 500", async () => {
    const before = await scrape(app)
    const lines = await accessLinesOf(async () => {
      for (const [method, path] of outside) {
        const answer = await fetch(`${app.origin}${path}`, { method, ...(method === "POST" ? { body: "{}", headers: { "content-type": "application/json" } } : {}) })
        expect(answer.status, `${method} ${path}`).toBe(404)
        if (method === "HEAD") continue
        expect(await answer.json(), `${method} ${path}`).toEqual({ error: { code: "not_found", message: `No endpoint ${method} ${path}.` } })
      }
    })
    expect(lines.map((line) => [line.path, line.status])).toEqual(outside.map(([, path]) => [path, 404]))
    const after = await scrape(app)
    const delta = (labels: Record<string, string>) => after.sum("wsapi_http_requests_total", labels) - before.sum("wsapi_http_requests_total", labels)
    expect(delta({ status: "500" })).toBe(0)
    expect(delta({ family: "other", status: "404" })).toBe(outside.length)
  })

  it("leaves requests inside the prefix as they were: an unknown path is the same 404, a known one is served", async () => {
    const lines = await accessLinesOf(async () => {
      const unknown = await fetch(`${app.url}/favicon.ico`)
      expect(unknown.status).toBe(404)
      expect(await unknown.json()).toEqual({ error: { code: "not_found", message: "No endpoint GET /favicon.ico." } })
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200)
    })
    expect(lines.map((line) => [line.path, line.status])).toEqual([["/api/public/favicon.ico", 404], ["/api/public/healthz", 200]])
  })
})
