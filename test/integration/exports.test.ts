import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { exportLayouts } from "../../src/domain/exportLayouts"
import { call, createKey, createWorkspace, testAdminToken, useApp } from "../support/app"
import { eventually } from "../support/fakeUpstream"
import { datePoint, dbQuery, ingest, message, runExport, workflowRun } from "../support/usage"

const range = (from: string, to: string, timezone = "UTC") => ({ from: datePoint(from, timezone), to: datePoint(to, timezone) })
const january = range("2026-01-05T00:00:00", "2026-01-07T00:00:00")
const header = (kind: keyof typeof exportLayouts) => exportLayouts[kind].columns.map((column) => column.name).join(",")

const DAY_5 = "2026-01-05T00:00:00+00:00,2026-01-06T00:00:00+00:00"
const DAY_6 = "2026-01-06T00:00:00+00:00,2026-01-07T00:00:00+00:00"

const activity = [
  message("m1", "2026-01-05T09:15:00Z", {
    user: { id: "u1", email: "ann@example.com", name: "Ann" },
    assistant: { id: "a1", name: "Helper" },
    project: { id: "p1", name: "Launch" },
    inputTokens: 100,
    outputTokens: 200,
    feature: "chat",
    conversationId: "c1"
  }),
  message("m2", "2026-01-05T14:40:00Z", {
    user: { id: "u1", email: "ann@example.com", name: "Ann" },
    model: "assistantmodel-sonnet-4-5-20250929",
    inputTokens: 1,
    outputTokens: 2,
    feature: "search",
    conversationId: "c1"
  }),
  message("m3", "2026-01-06T23:59:59Z", {
    user: { id: "u2", email: "bob@example.com", name: '=HYPERLINK("x"),y' },
    assistant: { id: "a1", name: "Helper" },
    project: { id: "p1", name: "Launch" },
    inputTokens: 5,
    outputTokens: 6
  }),
  // The end of the range is exclusive.
  message("m4", "2026-01-07T00:00:00Z", { user: { id: "u3", name: "Late" } }),
  workflowRun("r1", "2026-01-05T08:00:00Z", 2_000, { user: { id: "u1" }, project: { id: "p1", name: "Launch" } }),
  workflowRun("r2", "2026-01-05T09:00:00Z", 4_000, { status: "failed", user: { id: "u2" } }),
  workflowRun("r3", "2026-01-06T10:00:00Z", 10_000)
]

describe("usage exports", () => {
  const app = useApp({}, { stores: "postgres" })
  let workspaceId = ""
  let key = ""

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    workspaceId = workspace.id
    key = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
    await ingest(app.current, workspace.id, activity)
    await dbQuery(
      app.current,
      `INSERT INTO api_requests (workspace_id, created_at, key_id, status, outcome, stream, input_tokens, output_tokens,
                                 latency_ms, cost_usd, endpoint, provider, region, model)
       VALUES ($1, '2026-01-05T12:00:00Z', gen_random_uuid(), 200, 'completed', false, 10, 20, 100, 0.25, 'chat_completions', 'provider_a', 'eu', 'chatgen-4o'),
              ($1, '2026-01-05T13:00:00Z', gen_random_uuid(), 500, 'failed', false, 0, 0, 300, 0, 'chat_completions', 'provider_a', 'eu', 'chatgen-4o'),
              -- A stream the upstream cut midway: answered 200, failed.
              ($1, '2026-01-05T14:00:00Z', gen_random_uuid(), 200, 'failed', true, 5, 7, 200, 0.05, 'chat_completions', 'provider_a', 'eu', 'chatgen-4o'),
              -- A stream the client cancelled: not a failure.
              ($1, '2026-01-05T15:00:00Z', gen_random_uuid(), 200, 'cancelled', true, 3, 4, 400, 0.02, 'chat_completions', 'provider_a', 'eu', 'chatgen-4o')`,
      [workspace.id]
    )
  })

  const expectResult = (result: Awaited<ReturnType<typeof runExport>>, kind: keyof typeof exportLayouts) => {
    expect(result.status).toBe(200)
    expect(result.body.success).toBe(true)
    const { data } = result.body
    expect(data.dataType).toBe(kind)
    expect(data.filePath).toMatch(new RegExp(`^${kind}-usage/${workspaceId}/${kind}-usage-20260105-20260107-${exportLayouts[kind].version}-[a-z0-9]+\\.csv$`))
    expect(data.downloadUrl).toContain(`/downloads/${data.filePath}?expires=`)
    expect(data.dateRange).toEqual({ from: "2026-01-05T00:00:00+00:00", to: "2026-01-07T00:00:00+00:00" })
    expect(result.lines![0]).toBe(header(kind))
    expect(data.recordCount).toBe(result.lines!.length - 1)
    return result.lines!.slice(1)
  }

  it("users: one row per user and day, RFC 4180 quoting and formula cells neutralised", async () => {
    const rows = expectResult(await runExport(app.current, key, "users", january), "users")
    expect(rows).toEqual([
      `${DAY_5},u1,ann@example.com,Ann,2,1,1,1,chat;search,assistantmodel-sonnet-4-5-20250929;chatgen-4o,2,9,14,101,202`,
      // u2 only ran a workflow on the 5th: no message, no row. The formula-like name gets a leading quote.
      `${DAY_6},u2,bob@example.com,"'=HYPERLINK(""x""),y",1,0,1,1,,chatgen-4o,1,23,23,5,6`
    ])
  })

  it("assistants, workflows, projects and models", async () => {
    expect(expectResult(await runExport(app.current, key, "assistants", january), "assistants")).toEqual([
      `${DAY_5},a1,Helper,1,1,1,100,200`,
      `${DAY_6},a1,Helper,1,1,0,5,6`
    ])
    expect(expectResult(await runExport(app.current, key, "workflows", january), "workflows")).toEqual([
      // 2 s and 4 s: p95 = 2000 + 0.95 × 2000 = 3900
      `${DAY_5},w1,Nightly,2,1,1,0.5000,2000,3000,3900,4000,2`,
      `${DAY_6},w1,Nightly,1,1,0,1.0000,10000,10000,10000,10000,0`
    ])
    // Platform messages are priced from config/prices.json (USD per million tokens): chatgen-4o 2.5 in,
    // 10 out: 100 × 2.5 + 200 × 10 = 2250 → 0.002250; 5 × 2.5 + 6 × 10 = 72.5 → 0.000073.
    expect(expectResult(await runExport(app.current, key, "projects", january), "projects")).toEqual([
      `${DAY_5},p1,Launch,1,1,1,100,200,0.002250`,
      `${DAY_6},p1,Launch,1,0,1,5,6,0.000073`
    ])
    expect(expectResult(await runExport(app.current, key, "models", january), "models")).toEqual([
      // API traffic carries its recorded cost; latency is the mean of 100, 300, 200 and 400 ms. Failed: the
      // 500 and the stream cut after its 200, not the cancelled stream.
      // Rows written without a deployment (as before they were recorded): the last cell is empty.
      `${DAY_5},api,chatgen-4o,provider_a,eu,4,2,18,31,0.320000,250,false,0,`,
      // assistantmodel-sonnet-4-5: 3 in, 15 out: 1 × 3 + 2 × 15 = 33 → 0.000033
      `${DAY_5},platform,assistantmodel-sonnet-4-5-20250929,provider_b,,1,0,1,2,0.000033,,,,`,
      `${DAY_5},platform,chatgen-4o,provider_a,,1,0,100,200,0.002250,,,,`,
      `${DAY_6},platform,chatgen-4o,provider_a,,1,0,5,6,0.000073,,,,`
    ])
  })

  it("answers 400 naming the field for bad date points and ranges", async () => {
    const cases: ReadonlyArray<[unknown, string]> = [
      [{ ...january, from: datePoint("2026-01-05T00:00:00", "Mars/Olympus") }, "from.timezone"],
      [{ ...january, from: datePoint("2026-01-05T00:00:00", "+01:00") }, "from.timezone"],
      [{ ...january, to: datePoint("2026-02-30T00:00:00", "UTC") }, "to.date"],
      [{ ...january, to: datePoint("yesterday", "UTC") }, "to.date"],
      [{ ...january, to: datePoint("2026-01-07T00:00:00+02:00", "UTC") }, "to.date"],
      [range("2026-01-07T00:00:00", "2026-01-05T00:00:00"), "to"],
      [range("2026-01-05T00:00:00", "2026-01-05T00:00:00"), "to"],
      [{ from: january.from }, "to"],
      [{ ...january, from: { date: "2026-01-05" } }, "from.timezone"]
    ]
    for (const [body, field] of cases) {
      const answer = await call(app.current, "POST", "/export/users", { token: key, body })
      expect(answer.status, JSON.stringify(body)).toBe(400)
      expect(answer.body.success).toBe(false)
      expect(answer.body.error.field, JSON.stringify(body)).toBe(field)
    }
    const malformed = await call(app.current, "POST", "/export/users", { token: key, body: "{" })
    expect(malformed.status).toBe(400)
    expect(malformed.body.success).toBe(false)
  })

  it("answers 400 naming from.timezone for a zone Node knows but the database does not", async () => {
    // Links dropped from the tz database (2020b, 2017c) that Node's ICU still accepts; PostgreSQL answers 22023.
    const zone = ["US/Pacific-New", "Canada/East-Saskatchewan"].find((name) => {
      try {
        return new Intl.DateTimeFormat("en", { timeZone: name }).resolvedOptions().timeZone !== ""
      } catch {
        return false
      }
    })
    expect(zone, "this Node accepts none of the candidate zones: pick another one it knows and PostgreSQL does not").toBeDefined()
    // With events in range and without any (the zone is read once in any case).
    for (const body of [range("2026-01-05", "2026-01-07", zone), range("2025-01-01", "2025-02-01", zone)]) {
      for (const kind of ["users", "models"]) {
        const answer = await call(app.current, "POST", `/export/${kind}`, { token: key, body })
        expect(answer.status, `${kind} ${body.from.date}`).toBe(400)
        expect(answer.body).toMatchObject({
          success: false,
          error: { code: "invalid_date_range", field: "from.timezone", message: expect.stringContaining(`"${zone}"`) }
        })
      }
    }
    // Only the reporting zone reaches the database: an unknown to.timezone is resolved by Node alone.
    const toOnly = await call(app.current, "POST", "/export/users", {
      token: key,
      body: { from: january.from, to: datePoint("2026-01-06T16:00:00", zone!) }
    })
    expect(toOnly.status).toBe(200)
  })

  it("answers 401 without a key, with a wrong key and with a key lacking USAGE_EXPORT_API", async () => {
    const completion = await createKey(app.current, workspaceId, ["COMPLETION_API"])
    for (const token of [undefined, "wsk_wrong", `wsk_${"B".repeat(43)}`, completion.key]) {
      const answer = await call(app.current, "POST", "/export/models", { ...(token ? { token } : {}), body: january })
      expect(answer.status).toBe(401)
      expect(answer.body).toMatchObject({ success: false, error: { code: expect.any(String), message: expect.any(String) } })
    }
  })

  it("answers 404 when the period has no data", async () => {
    for (const kind of ["users", "assistants", "workflows", "projects", "models"]) {
      const answer = await call(app.current, "POST", `/export/${kind}`, { token: key, body: range("2025-01-01", "2025-02-01") })
      expect(answer.status, kind).toBe(404)
      expect(answer.body.error.code).toBe("no_data")
    }
    // A message without assistant or project: users and models have rows, assistants and projects none.
    const lone = await createWorkspace(app.current, "Lone")
    const loneKey = (await createKey(app.current, lone.id, ["USAGE_EXPORT_API"])).key
    await ingest(app.current, lone.id, [message("x1", "2026-01-05T10:00:00Z")])
    expect((await call(app.current, "POST", "/export/users", { token: loneKey, body: january })).status).toBe(200)
    expect((await call(app.current, "POST", "/export/assistants", { token: loneKey, body: january })).status).toBe(404)
    expect((await call(app.current, "POST", "/export/projects", { token: loneKey, body: january })).status).toBe(404)
    expect((await call(app.current, "POST", "/export/workflows", { token: loneKey, body: january })).status).toBe(404)
  })

  it("answers 404 for workflows when workflows are not enabled in the workspace", async () => {
    const workspace = await createWorkspace(app.current, "No workflows", { workflowsEnabled: false })
    const workspaceKey = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
    await ingest(app.current, workspace.id, activity)
    const answer = await call(app.current, "POST", "/export/workflows", { token: workspaceKey, body: january })
    expect(answer.status).toBe(404)
    expect(answer.body.error).toMatchObject({ code: "workflows_not_enabled", message: expect.stringContaining("not enabled") })
    expect((await call(app.current, "POST", "/export/users", { token: workspaceKey, body: january })).status).toBe(200)
    // Enabled again, the same data is exported.
    await call(app.current, "PATCH", `/admin/workspaces/${workspace.id}`, { token: testAdminToken, body: { settings: { workflowsEnabled: true } } })
    // The key cache holds the workspace for a second: polled until the setting shows.
    const enabled = await eventually(() => call(app.current, "POST", "/export/workflows", { token: workspaceKey, body: january }), (answer) => answer.status !== 404, 5_000)
    expect(enabled.status).toBe(200)
  })

  it("never shows one workspace's rows to another workspace's key", async () => {
    const other = await createWorkspace(app.current, "Other")
    const otherKey = (await createKey(app.current, other.id, ["USAGE_EXPORT_API"])).key
    await ingest(app.current, other.id, [message("m1", "2026-01-05T10:00:00Z", { user: { id: "u1", email: "other@example.org", name: "Other" } })])
    const theirs = await runExport(app.current, otherKey, "users", january)
    expect(theirs.body.data.recordCount).toBe(1)
    expect(theirs.body.data.filePath).toContain(`/${other.id}/`)
    expect(theirs.csv).toContain("other@example.org")
    expect(theirs.csv).not.toContain("ann@example.com")
    const ours = await runExport(app.current, key, "users", january)
    expect(ours.csv).not.toContain("other@example.org")
    for (const kind of ["assistants", "workflows", "projects"]) {
      expect((await call(app.current, "POST", `/export/${kind}`, { token: otherKey, body: january })).status, kind).toBe(404)
    }
  })
})

describe("usage exports over the row limit", () => {
  const app = useApp({ EXPORT_MAX_ROWS: "2" }, { stores: "postgres" })

  it("answer 400 asking to narrow the range, before any file is written", async () => {
    const workspace = await createWorkspace(app.current)
    const key = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
    await ingest(app.current, workspace.id, [
      message("m1", "2026-01-05T10:00:00Z", { user: { id: "u1" } }),
      message("m2", "2026-01-05T10:00:00Z", { user: { id: "u2" } }),
      message("m3", "2026-01-06T10:00:00Z", { user: { id: "u1" } })
    ])
    const answer = await call(app.current, "POST", "/export/users", { token: key, body: january })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: "export_too_large", message: expect.stringContaining("Narrow the date range") })
    expect(answer.body.error.message).toContain("more than 2 rows")
    const exportsDir = path.join(app.current.env.DATA_DIR!, "exports")
    const files = fs.existsSync(exportsDir) ? fs.readdirSync(exportsDir, { recursive: true }) : []
    expect(files.filter((file) => String(file).endsWith(".csv") || String(file).endsWith(".part"))).toEqual([])
    // Exactly at the limit is allowed.
    const narrower = await call(app.current, "POST", "/export/users", { token: key, body: range("2026-01-05", "2026-01-06") })
    expect(narrower.status).toBe(200)
    expect(narrower.body.data.recordCount).toBe(2)
  })
})
