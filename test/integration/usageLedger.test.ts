import type * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database"
import { eventually, type FakeUpstream, startFakeUpstream, chatCompletionAnswer } from "../support/fakeUpstream"
import { call, createKey, createWorkspace, type RunningApp, startApp } from "../support/app"

/**
 * A hostile upstream: the last user message chooses the usage it reports ("fraction", "huge",
 * "negative", "claims" 1e300 of each), or "hang" (no answer at all); else an honest answer.
 */
const behave = (body: any, response: http.ServerResponse) => {
  const said: string = body?.messages?.at(-1)?.content ?? ""
  if (said === "hang") return
  const usage = said === "fraction"
    ? { prompt_tokens: 5.5, completion_tokens: 2, total_tokens: 7.5 }
    : said === "huge"
    ? { prompt_tokens: 3, completion_tokens: 1e10, total_tokens: 1e10 }
    : said === "negative"
    ? { prompt_tokens: -4, completion_tokens: 1, total_tokens: -3 }
    : said === "claims"
    ? { prompt_tokens: 1e300, completion_tokens: 1e300, total_tokens: 2e300 }
    : { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }
  response.writeHead(200, { "content-type": "application/json" })
  response.end(chatCompletionAnswer(usage))
}

interface Row {
  readonly request_id: string
  readonly input_tokens: number
  readonly output_tokens: number
  readonly clamped: boolean
  readonly outcome: string
  readonly status: number
}

describe("the usage ledger against a hostile upstream", () => {
  let upstream: FakeUpstream
  let app: RunningApp
  const workspaces: Array<{ id: string; key: string }> = []

  beforeAll(async () => {
    upstream = await startFakeUpstream((request, response) => behave(request.body, response))
    app = await startApp({ UPSTREAM_PROVIDER_A_EU_URL: upstream.url, UPSTREAM_PROVIDER_A_EU_KEY: "upstream-secret", UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "30000" }, { stores: "postgres" })
    for (let i = 0; i < 3; i++) {
      const workspace = await createWorkspace(app)
      workspaces.push({ id: workspace.id, key: (await createKey(app, workspace.id, ["COMPLETION_API"])).key })
    }
  })
  afterAll(async () => {
    await app?.stop()
    await upstream?.close()
  })

  const ask = (key: string, content: string, signal?: AbortSignal, fields: Record<string, unknown> = {}) =>
    fetch(`${app.url}/provider_a/eu/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content }], ...fields }),
      ...(signal ? { signal } : {})
    })

  const rowsOf = (workspaceId: string) =>
    query<Row>(app.env.DATABASE_URL!, "SELECT request_id, input_tokens, output_tokens, clamped, outcome, status FROM api_requests WHERE workspace_id = $1", [workspaceId])

  it("records usage beyond what the request could consume as the bound, marked, and every other workspace's records still reach the ledger", async () => {
    const [hostile, second, third] = workspaces as [typeof workspaces[0], typeof workspaces[0], typeof workspaces[0]]
    const ids = new Map<string, string>()
    // "claims" last: settled at the model's context (128,000 tokens), it spends the workspace's minute.
    for (const said of ["fraction", "negative", "huge", "claims"]) {
      const answer = await ask(hostile.key, said, undefined, said === "claims" ? { max_tokens: 16 } : {})
      expect(answer.status).toBe(200)
      ids.set(answer.headers.get("x-request-id")!, said)
    }
    // Settled at the model's context, not at 10^300 tokens: a wait of minutes, not of months.
    const after = await ask(hostile.key, "hello")
    expect(after.status).toBe(429)
    expect(Number(after.headers.get("retry-after"))).toBeLessThanOrEqual(180)
    for (let i = 0; i < 10; i++) {
      expect((await ask(second.key, "hello")).status).toBe(200)
      expect((await ask(third.key, "hello")).status).toBe(200)
    }
    const rows = await eventually(() => rowsOf(hostile.id), (r) => r.length === 4)
    const bySaid = new Map(rows.map((r) => [ids.get(r.request_id)!, r]))
    expect(bySaid.get("fraction")).toMatchObject({ input_tokens: 6, output_tokens: 2, clamped: true })
    // No max_tokens: output bounded by chatgen-4o's own limit.
    expect(bySaid.get("huge")).toMatchObject({ input_tokens: 3, output_tokens: 16_384, clamped: true })
    expect(bySaid.get("negative")).toMatchObject({ input_tokens: 0, output_tokens: 1, clamped: true })
    // max_tokens 16: at most 16 output tokens, and the model's context window of input.
    expect(bySaid.get("claims")).toMatchObject({ input_tokens: 128_000, output_tokens: 16, clamped: true })
    expect((await eventually(() => rowsOf(second.id), (r) => r.length === 10)).every((r) => !r.clamped)).toBe(true)
    expect(await eventually(() => rowsOf(third.id), (r) => r.length === 10)).toHaveLength(10)
    const dead = await query<{ n: number }>(app.env.DATABASE_URL!, "SELECT count(*)::int AS n FROM api_requests_dead_letter")
    expect(dead[0]!.n).toBe(0)

    // The models export (PostgreSQL) bills the bounds and counts the four bounded requests in its last column.
    const exporter = (await createKey(app, hostile.id, ["USAGE_EXPORT_API"])).key
    const today = new Date().toISOString().slice(0, 10)
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
    const exported = await call(app, "POST", "/export/models", {
      token: exporter,
      body: { from: { date: today, timezone: "UTC" }, to: { date: tomorrow, timezone: "UTC" } }
    })
    expect(exported.status).toBe(200)
    const csv = await (await fetch(exported.body.data.downloadUrl)).text()
    const [header, ...lines] = csv.split("\r\n").filter((line) => line !== "")
    expect(header!.split(",").slice(-2)).toEqual(["clamped", "deployment"])
    // 6 + 0 + 3 + 128,000 input and 2 + 1 + 16,384 + 16 output tokens, at $2.50 and $10 a million; then the deployment.
    expect(lines).toEqual([expect.stringMatching(/,api,chatgen-4o,provider_a,eu,4,0,128009,16403,0\.484053,\d+,false,4,[^,]*$/)])
  }, 60_000)

  it("records a JSON request whose client left before the answer as cancelled, status 499", async () => {
    const workspace = await createWorkspace(app)
    const key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
    const seenBefore = upstream.seen.length
    const leaving = new AbortController()
    const pending = ask(key, "hang", leaving.signal).catch((e: unknown) => e)
    await eventually(() => upstream.seen.length, (n) => n > seenBefore, 5_000)
    leaving.abort()
    expect(await pending).toBeInstanceOf(Error)
    const rows = await eventually(() => rowsOf(workspace.id), (r) => r.length > 0)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ outcome: "cancelled", status: 499, output_tokens: 0 })
    expect(rows[0]!.input_tokens).toBeGreaterThan(0)
  }, 30_000)
})
