import { describe, expect, it } from "vitest"
import { call, createWorkspace, testAdminToken, useApp } from "../support/app"
import { dbQuery, ingest, message, workflowRun } from "../support/usage"

const counts = async (app: Parameters<typeof dbQuery>[0], workspaceId: string) => {
  const [row] = await dbQuery<{ messages: number; runs: number; users: number; workflows: number }>(
    app,
    `SELECT (SELECT count(*)::int FROM message_events WHERE workspace_id = $1) AS messages,
            (SELECT count(*)::int FROM workflow_runs WHERE workspace_id = $1) AS runs,
            (SELECT count(*)::int FROM workspace_users WHERE workspace_id = $1) AS users,
            (SELECT count(*)::int FROM workspace_workflows WHERE workspace_id = $1) AS workflows`,
    [workspaceId]
  )
  return row!
}

describe("event ingestion", () => {
  const app = useApp({}, { stores: "postgres" })
  const post = (workspaceId: string, body: unknown, token = testAdminToken) =>
    call(app.current, "POST", `/admin/workspaces/${workspaceId}/events`, { token, body })

  it("takes a batch of 10,000 events in one request", async () => {
    const workspace = await createWorkspace(app.current)
    const events = Array.from({ length: 10_000 }, (_, i) =>
      i % 10 === 9
        ? workflowRun(`r${i}`, new Date(Date.UTC(2026, 0, 5, 8) + i * 1000).toISOString(), 1500, {
          user: { id: `u${i % 50}` }
        })
        : message(`m${i}`, new Date(Date.UTC(2026, 0, 5, 8) + i * 1000).toISOString(), {
          user: { id: `u${i % 50}`, email: `u${i % 50}@example.com`, name: `User ${i % 50}` },
          assistant: { id: `a${i % 3}`, name: `Assistant ${i % 3}` },
          project: { id: `p${i % 4}`, name: `Project ${i % 4}` }
        })
    )
    expect(await ingest(app.current, workspace.id, events)).toEqual({ accepted: 10_000, duplicates: 0 })
    expect(await counts(app.current, workspace.id)).toEqual({ messages: 9_000, runs: 1_000, users: 50, workflows: 1 })
  })

  it("rejects the whole batch when one event is bad, naming its index and field, and writes nothing", async () => {
    const workspace = await createWorkspace(app.current)
    const events = Array.from({ length: 30 }, (_, i) => message(`m${i}`, "2026-01-05T10:00:00Z"))
    const bad = [...events]
    bad[17] = { ...events[17]!, occurredAt: "2026-13-01T00:00:00Z" }
    const answer = await post(workspace.id, { events: bad })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: "invalid_event", field: "events[17].occurredAt" })
    expect(answer.body.error.message).toContain("Event 17")
    expect(await counts(app.current, workspace.id)).toEqual({ messages: 0, runs: 0, users: 0, workflows: 0 })

    const cases: ReadonlyArray<[unknown, string]> = [
      [{ ...events[3]!, user: undefined }, "events[3].user"],
      [{ ...events[3]!, user: { id: "" } }, "events[3].user.id"],
      [{ ...events[3]!, type: "click" }, "events[3].type"],
      [{ ...events[3]!, inputTokens: -1 }, "events[3].inputTokens"],
      [workflowRun("r1", "2026-01-05T10:00:00Z", -5), "events[3].finishedAt"],
      ["not an object", "events[3]"]
    ]
    for (const [event, field] of cases) {
      const batch = [...events]
      batch[3] = event as (typeof events)[number]
      const rejected = await post(workspace.id, { events: batch })
      expect(rejected.status, field).toBe(400)
      expect(rejected.body.error.field).toBe(field)
    }
    expect((await counts(app.current, workspace.id)).messages).toBe(0)
  })

  it("is idempotent by event id: a retried batch adds nothing and counts the duplicates", async () => {
    const workspace = await createWorkspace(app.current)
    const first = [message("m1", "2026-01-05T10:00:00Z"), message("m2", "2026-01-05T11:00:00Z"), workflowRun("r1", "2026-01-05T12:00:00Z", 1000)]
    expect(await ingest(app.current, workspace.id, first)).toEqual({ accepted: 3, duplicates: 0 })
    expect(await ingest(app.current, workspace.id, first)).toEqual({ accepted: 0, duplicates: 3 })
    // Partly new, and one id twice in the same batch.
    const second = [message("m2", "2026-01-05T11:00:00Z"), message("m3", "2026-01-05T12:00:00Z"), message("m3", "2026-01-05T12:00:00Z")]
    expect(await ingest(app.current, workspace.id, second)).toEqual({ accepted: 1, duplicates: 2 })
    expect(await counts(app.current, workspace.id)).toMatchObject({ messages: 3, runs: 1 })
    // The same ids in another workspace are other events.
    const other = await createWorkspace(app.current, "Other")
    expect(await ingest(app.current, other.id, first)).toEqual({ accepted: 3, duplicates: 0 })
  })

  it("keeps the newest email and name of an entity, and a missing one does not erase it", async () => {
    const workspace = await createWorkspace(app.current)
    await ingest(app.current, workspace.id, [
      message("m1", "2026-01-05T10:00:00Z", { user: { id: "u1", email: "old@example.com", name: "Old" }, assistant: { id: "a1", name: "First" } }),
      // Older than m1 although later in the batch: it does not win.
      message("m0", "2026-01-04T10:00:00Z", { user: { id: "u1", email: "older@example.com", name: "Older" }, assistant: { id: "a1", name: "Zeroth" } })
    ])
    await ingest(app.current, workspace.id, [message("m2", "2026-01-06T10:00:00Z", { user: { id: "u1", name: "New" }, assistant: { id: "a1", name: "Second" } })])
    const [user] = await dbQuery<{ email: string; name: string }>(app.current, "SELECT email, name FROM workspace_users WHERE workspace_id = $1", [workspace.id])
    expect(user).toEqual({ email: "old@example.com", name: "New" })
    const [assistant] = await dbQuery<{ name: string }>(app.current, "SELECT name FROM workspace_assistants WHERE workspace_id = $1", [workspace.id])
    expect(assistant).toEqual({ name: "Second" })

    // A late batch of older events, and a retried older batch, put no old value back.
    await ingest(app.current, workspace.id, [
      message("m-late", "2026-01-05T12:00:00Z", { user: { id: "u1", email: "late@example.com", name: "Late" }, assistant: { id: "a1", name: "Late" } })
    ])
    await ingest(app.current, workspace.id, [
      message("m0", "2026-01-04T10:00:00Z", { user: { id: "u1", email: "older@example.com", name: "Older" }, assistant: { id: "a1", name: "Zeroth" } })
    ])
    const after = await dbQuery<{ email: string; name: string }>(app.current, "SELECT email, name FROM workspace_users WHERE workspace_id = $1", [workspace.id])
    // The late event is the newest to carry an email (m2 had none), and older than m2's name.
    expect(after).toEqual([{ email: "late@example.com", name: "New" }])
    const assistantAfter = await dbQuery<{ name: string }>(app.current, "SELECT name FROM workspace_assistants WHERE workspace_id = $1", [workspace.id])
    expect(assistantAfter).toEqual([{ name: "Second" }])
  })

  it("answers 400 for a body that is not a batch, 404 for an unknown workspace and 401 without the admin token", async () => {
    const workspace = await createWorkspace(app.current)
    const tooMany = await post(workspace.id, { events: Array.from({ length: 10_001 }, (_, i) => message(`m${i}`, "2026-01-05T10:00:00Z")) })
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.error).toMatchObject({ field: "events", message: expect.stringContaining("10000") })
    expect((await post(workspace.id, { notEvents: [] })).body.error.field).toBe("events")
    const malformed = await post(workspace.id, "{ not json")
    expect(malformed.status).toBe(400)
    expect(malformed.body.error.code).toBe("invalid_json")
    expect((await post("00000000-0000-4000-8000-000000000000", { events: [] })).status).toBe(404)
    expect((await post(workspace.id, { events: [] }, "wrong-token-0123456789")).status).toBe(401)
    expect(await ingest(app.current, workspace.id, [])).toEqual({ accepted: 0, duplicates: 0 })
  })
})

describe("event ingestion with a small body limit", () => {
  const app = useApp({ MAX_BODY_BYTES: "2000" }, { stores: "postgres" })

  it("answers 413 for a body over MAX_BODY_BYTES", async () => {
    const workspace = await createWorkspace(app.current)
    const events = Array.from({ length: 50 }, (_, i) => message(`m${i}`, "2026-01-05T10:00:00Z"))
    const answer = await call(app.current, "POST", `/admin/workspaces/${workspace.id}/events`, { token: testAdminToken, body: { events } })
    expect(answer.status).toBe(413)
    expect(answer.body.error.code).toBe("request_too_large")
  })
})
