import { beforeAll, describe, expect, it } from "vitest"
import { exportLayouts } from "../../src/domain/exportLayouts"
import { useApp, call, createKey, createWorkspace } from "../support/app"
import { datePoint, ingest, message, runExport, workflowRun } from "../support/usage"

const range = (from: string, to: string) => ({ from: datePoint(from, "UTC"), to: datePoint(to, "UTC") })
const january = range("2026-01-05T00:00:00", "2026-01-07T00:00:00")
const header = (kind: keyof typeof exportLayouts) => exportLayouts[kind].columns.map((column) => column.name).join(",")
const DAY_5 = "2026-01-05T00:00:00+00:00,2026-01-06T00:00:00+00:00"
const DAY_6 = "2026-01-06T00:00:00+00:00,2026-01-07T00:00:00+00:00"

// Ingestion, an export and the download of its file on the in-memory app (ledger and export files in
// memory): the rows test/integration/exports.test.ts expects of the same events over PostgreSQL.
describe("events and exports on the in-memory app", () => {
  const app = useApp()
  let key = ""
  let workspaceId = ""

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    workspaceId = workspace.id
    key = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
  })

  it("ingests events once (a repeat is a duplicate), then exports them and serves the file by its signed link", async () => {
    const events = [
      message("m1", "2026-01-05T09:15:00Z", {
        user: { id: "u1", email: "ann@example.com", name: "Ann" },
        project: { id: "p1", name: "Launch" },
        inputTokens: 100,
        outputTokens: 200
      }),
      message("m3", "2026-01-06T23:59:59Z", {
        user: { id: "u2", email: "bob@example.com", name: '=HYPERLINK("x"),y' },
        project: { id: "p1", name: "Launch" },
        inputTokens: 5,
        outputTokens: 6
      }),
      workflowRun("r1", "2026-01-05T08:00:00Z", 2_000, { user: { id: "u1" }, project: { id: "p1", name: "Launch" } })
    ]
    expect(await ingest(app.current, workspaceId, events)).toEqual({ accepted: 3, duplicates: 0 })
    expect(await ingest(app.current, workspaceId, events.slice(0, 1))).toEqual({ accepted: 0, duplicates: 1 })

    const projects = await runExport(app.current, key, "projects", january)
    expect(projects.status).toBe(200)
    expect(projects.body.data.filePath).toMatch(new RegExp(`^projects-usage/${workspaceId}/projects-usage-20260105-20260107-v1-[a-z0-9]+\\.csv$`))
    expect(projects.body.data.downloadUrl).toContain(`/downloads/${projects.body.data.filePath}?expires=`)
    // Priced from config/prices.json: chatgen-4o 2.5 in, 10 out per million tokens.
    expect(projects.lines).toEqual([header("projects"), `${DAY_5},p1,Launch,1,1,1,100,200,0.002250`, `${DAY_6},p1,Launch,1,0,1,5,6,0.000073`])
    expect(projects.body.data.recordCount).toBe(2)

    const users = await runExport(app.current, key, "users", january)
    expect(users.lines![0]).toBe(header("users"))
    // The formula-like name is neutralised in the file, as over PostgreSQL.
    expect(users.lines!.some((line) => line.includes(`"'=HYPERLINK(""x""),y"`))).toBe(true)
    expect(app.current.usage.exportRuns.filter((run) => run.workspaceId === workspaceId)).toHaveLength(2)

    // A link whose signature does not match is refused in the export error format.
    const tampered = projects.body.data.downloadUrl.replace(/signature=[^&]+/, "signature=AAAA")
    const refused = await fetch(tampered)
    expect(refused.status).toBe(403)
    expect(await refused.json()).toMatchObject({ success: false, error: { code: "invalid_signature" } })
  })

  it("refuses in the export error format: a bad date names its field, a missing key is 401", async () => {
    const bad = await call(app.current, "POST", "/export/users", { token: key, body: { ...january, to: datePoint("2026-02-30T00:00:00", "UTC") } })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ success: false, error: { field: "to.date" } })
    expect((await call(app.current, "POST", "/export/users", { body: january })).status).toBe(401)
  })
})
