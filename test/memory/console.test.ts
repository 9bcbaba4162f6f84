import ProviderAClient from "openai"
import { describe, expect, it } from "vitest"
import { eventually } from "../support/fakeUpstream"
import { consoleCall, invitePerson, operatorCookie, password, sessionCookieOf, tokenOf } from "../support/console"
import { useApp, call, createKey, createWorkspace, testAdminToken } from "../support/app"
import { ingest, message } from "../support/usage"

// Console sign-in and the calls of its pages on the in-memory app (people, sessions, throttle and audit
// in memory): what test/integration/consoleSession.test.ts and consoleRoles.test.ts check over PostgreSQL.
describe("the console on the in-memory app", () => {
  const app = useApp()

  it("invitation → password → signed in; the session answers and ends on sign-out", async () => {
    const workspace = await createWorkspace(app.current, "Invited")
    const invited = await call(app.current, "POST", `/admin/workspaces/${workspace.id}/members`, {
      token: testAdminToken,
      body: { email: "Ada@Example.com", name: "Ada", role: "admin" }
    })
    expect(invited.status).toBe(201)
    expect(invited.body).toMatchObject({ email: "ada@example.com", name: "Ada", role: "admin", status: "invited" })
    const token = tokenOf(invited.body.invitationUrl)
    expect((await consoleCall(app.current, "GET", `/console/api/invitations/${token}`)).body)
      .toEqual({ email: "ada@example.com", name: "Ada", role: "admin", workspace: { id: workspace.id, name: "Invited" }, expiresAt: expect.any(String) })

    const accepted = await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { body: { password } })
    expect(accepted.status).toBe(200)
    expect(accepted.body).toEqual({
      member: { id: expect.any(String), email: "ada@example.com", name: "Ada" },
      operator: false,
      workspaces: [{ id: workspace.id, name: "Invited", role: "admin" }]
    })
    const again = await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { body: { password } })
    expect(again.status).toBe(410)
    expect(again.body.error.code).toBe("invitation_used")

    const signedIn = await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "ada@example.com", password } })
    expect(signedIn.status).toBe(200)
    const cookie = sessionCookieOf(signedIn.headers)
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie })).body.member.email).toBe("ada@example.com")
    expect((await consoleCall(app.current, "DELETE", "/console/api/session", { cookie })).status).toBe(204)
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie })).status).toBe(401)
  })

  it("a page's calls: members and keys of a workspace, the audit log of what was done", async () => {
    const workspace = await createWorkspace(app.current, "Pages")
    const { cookie } = await invitePerson(app.current, workspace.id, "lee@example.com", "admin")
    const created = await consoleCall(app.current, "POST", `/console/api/workspaces/${workspace.id}/api-keys`, {
      cookie,
      body: { name: "from the console", scopes: ["COMPLETION_API"] }
    })
    expect(created.status).toBe(201)
    const keys = await consoleCall(app.current, "GET", `/console/api/workspaces/${workspace.id}/api-keys`, { cookie })
    expect(keys.status).toBe(200)
    expect(JSON.stringify(keys.body)).toContain("from the console")
    const members = await consoleCall(app.current, "GET", `/console/api/workspaces/${workspace.id}/members`, { cookie })
    expect(members.status).toBe(200)
    expect(members.body.data.map((m: { email: string }) => m.email)).toEqual(["lee@example.com"])
    const audit = await consoleCall(app.current, "GET", `/console/api/workspaces/${workspace.id}/audit`, { cookie })
    expect(audit.status).toBe(200)
    expect(audit.body.data.map((row: { action: string }) => row.action)).toEqual(
      expect.arrayContaining(["api_key.created", "invitation.accepted", "member.invited"])
    )
    // Another workspace's resources are "not found" for this person.
    const other = await createWorkspace(app.current, "Elsewhere")
    expect((await consoleCall(app.current, "GET", `/console/api/workspaces/${other.id}/members`, { cookie })).status).toBe(404)
  })

  it("the overview page: usage of forwarded requests and activity of ingested events, per day", async () => {
    const workspace = await createWorkspace(app.current, "Overview")
    const key = await createKey(app.current, workspace.id, ["COMPLETION_API"], "the key")
    const client = new ProviderAClient({ apiKey: key.key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
    const completion = await client.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] })
    await ingest(app.current, workspace.id, [message("m1", "2026-01-05T10:00:00Z", { inputTokens: 10, outputTokens: 20 })])
    const cookie = await operatorCookie(app.current)

    // The day the request was recorded on (UTC), read from the ledger's memory once the recorder wrote it.
    const recorded = await eventually(
      () => [...(app.current.usage.workspaces.get(workspace.id)?.requests.values() ?? [])],
      (rows) => rows.length > 0
    )
    const today = recorded[0]!.createdAt.toISOString().slice(0, 10)
    const tomorrow = new Date(recorded[0]!.createdAt.getTime() + 86_400_000).toISOString().slice(0, 10)
    const usage = await consoleCall(app.current, "GET", `/console/api/workspaces/${workspace.id}/usage?from=${today}&to=${tomorrow}&timezone=UTC&groupBy=apiKey`, { cookie })
    expect(usage.status).toBe(200)
    expect(usage.body.data).toEqual([{
      day: today,
      group: key.id,
      label: "the key",
      requests: 1,
      inputTokens: completion.usage!.prompt_tokens,
      outputTokens: completion.usage!.completion_tokens,
      costUsd: expect.any(Number)
    }])
    const activity = await consoleCall(app.current, "GET", `/console/api/workspaces/${workspace.id}/activity?from=2026-01-01&to=2026-02-01&timezone=UTC`, { cookie })
    expect(activity.body.data).toEqual([{ day: "2026-01-05", messages: 1, activeUsers: 1, inputTokens: 10, outputTokens: 20 }])
  })
})

// Failures count per client address too: on an app of its own, so the other cases' sign-ins are not refused.
describe("sign-in throttling on the in-memory app", () => {
  const app = useApp()

  it("the operator signs in with the admin token; wrong passwords are throttled per email", async () => {
    const operator = await operatorCookie(app.current)
    const session = await consoleCall(app.current, "GET", "/console/api/session", { cookie: operator })
    expect(session.body.operator).toBe(true)

    const attempts = []
    for (let i = 0; i < 6; i++) {
      attempts.push((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "nobody@example.com", password: "wrong password 123" } })).status)
    }
    expect(attempts).toEqual([401, 401, 401, 401, 401, 429])
  })
})
