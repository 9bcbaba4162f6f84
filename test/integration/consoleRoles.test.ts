import { beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database"
import { consoleCall, invitePerson, operatorCookie, password } from "../support/console"
import { call, createKey, createWorkspace, testAdminToken, useApp } from "../support/app"
import { eventually } from "../support/fakeUpstream"

type Role = "admin" | "member" | "operator" | "nobody" | "otherAdmin"
const roles: ReadonlyArray<Role> = ["admin", "member", "operator", "nobody", "otherAdmin"]

const exportBody = { from: { date: "2026-01-01", timezone: "UTC" }, to: { date: "2026-02-01", timezone: "UTC" } }

describe("console API: roles on every call", () => {
  const app = useApp({}, { stores: "postgres" })
  const cookies = {} as Record<Role, string | undefined>
  let a = ""
  let b = ""
  let memberId = ""

  beforeAll(async () => {
    a = (await createWorkspace(app.current, "Alpha")).id
    b = (await createWorkspace(app.current, "Beta")).id
    cookies.admin = (await invitePerson(app.current, a, "admin@alpha.example", "admin")).cookie
    const member = await invitePerson(app.current, a, "member@alpha.example", "member")
    cookies.member = member.cookie
    memberId = member.memberId
    cookies.otherAdmin = (await invitePerson(app.current, b, "admin@beta.example", "admin")).cookie
    cookies.operator = await operatorCookie(app.current)
    cookies.nobody = undefined
    const ingested = await call(app.current, "POST", `/admin/workspaces/${a}/events`, {
      token: testAdminToken,
      body: {
        events: [{
          type: "message",
          id: "m1",
          occurredAt: "2026-01-05T10:00:00Z",
          user: { id: "u1", email: "u1@example.com" },
          model: "chatgen-4o",
          inputTokens: 10,
          outputTokens: 20
        }]
      }
    })
    expect(ingested.status).toBe(200)
  })

  const invitee = async (role: Role) => {
    const invited = await call(app.current, "POST", `/admin/workspaces/${a}/members`, {
      token: testAdminToken,
      body: { email: `removable-${role}-${Math.random().toString(36).slice(2)}@alpha.example`, role: "member" }
    })
    return invited.body.id as string
  }

  const cases: ReadonlyArray<{
    readonly name: string
    readonly method: string
    readonly route: (role: Role) => Promise<string> | string
    readonly body?: unknown
    readonly expected: Readonly<Record<Role, number>>
  }> = [
    { name: "workspace", method: "GET", route: () => `/console/api/workspaces/${a}`, expected: { admin: 200, member: 200, operator: 200, nobody: 401, otherAdmin: 404 } },
    { name: "models", method: "GET", route: () => `/console/api/workspaces/${a}/models`, expected: { admin: 200, member: 200, operator: 200, nobody: 401, otherAdmin: 404 } },
    { name: "list keys", method: "GET", route: () => `/console/api/workspaces/${a}/api-keys`, expected: { admin: 200, member: 200, operator: 200, nobody: 401, otherAdmin: 404 } },
    {
      name: "create completion key",
      method: "POST",
      route: () => `/console/api/workspaces/${a}/api-keys`,
      body: { name: "app", scopes: ["COMPLETION_API"] },
      expected: { admin: 201, member: 201, operator: 201, nobody: 401, otherAdmin: 404 }
    },
    {
      name: "create export key",
      method: "POST",
      route: () => `/console/api/workspaces/${a}/api-keys`,
      body: { name: "exporter", scopes: ["USAGE_EXPORT_API"] },
      expected: { admin: 201, member: 403, operator: 201, nobody: 401, otherAdmin: 404 }
    },
    {
      name: "revoke someone else's key",
      method: "DELETE",
      route: async () => `/console/api/workspaces/${a}/api-keys/${(await createKey(app.current, a, ["COMPLETION_API"])).id}`,
      expected: { admin: 200, member: 404, operator: 200, nobody: 401, otherAdmin: 404 }
    },
    {
      name: "run export",
      method: "POST",
      route: () => `/console/api/workspaces/${a}/exports/users`,
      body: exportBody,
      expected: { admin: 200, member: 403, operator: 200, nobody: 401, otherAdmin: 404 }
    },
    {
      name: "recent exports",
      method: "GET",
      route: () => `/console/api/workspaces/${a}/exports?limit=5`,
      expected: { admin: 200, member: 403, operator: 200, nobody: 401, otherAdmin: 404 }
    },
    {
      name: "usage",
      method: "GET",
      route: () => `/console/api/workspaces/${a}/usage?from=2026-01-01&to=2026-02-01&groupBy=family`,
      expected: { admin: 200, member: 403, operator: 200, nobody: 401, otherAdmin: 404 }
    },
    {
      name: "activity",
      method: "GET",
      route: () => `/console/api/workspaces/${a}/activity?from=2026-01-01&to=2026-02-01`,
      expected: { admin: 200, member: 403, operator: 200, nobody: 401, otherAdmin: 404 }
    },
    { name: "list members", method: "GET", route: () => `/console/api/workspaces/${a}/members`, expected: { admin: 200, member: 403, operator: 200, nobody: 401, otherAdmin: 404 } },
    {
      name: "invite",
      method: "POST",
      route: () => `/console/api/workspaces/${a}/members`,
      body: { email: "new@alpha.example", role: "member" },
      expected: { admin: 201, member: 403, operator: 201, nobody: 401, otherAdmin: 404 }
    },
    {
      name: "change member",
      method: "PATCH",
      route: () => `/console/api/workspaces/${a}/members/${memberId}`,
      body: { role: "member" },
      expected: { admin: 200, member: 403, operator: 200, nobody: 401, otherAdmin: 404 }
    },
    {
      name: "remove member",
      method: "DELETE",
      route: async (role) => `/console/api/workspaces/${a}/members/${await invitee(role)}`,
      expected: { admin: 200, member: 403, operator: 200, nobody: 401, otherAdmin: 404 }
    },
    { name: "settings", method: "GET", route: () => `/console/api/workspaces/${a}/settings`, expected: { admin: 200, member: 403, operator: 200, nobody: 401, otherAdmin: 404 } },
    {
      name: "change settings",
      method: "PATCH",
      route: () => `/console/api/workspaces/${a}/settings`,
      body: { timezone: "Europe/Berlin" },
      expected: { admin: 200, member: 403, operator: 200, nobody: 401, otherAdmin: 404 }
    },
    { name: "audit", method: "GET", route: () => `/console/api/workspaces/${a}/audit`, expected: { admin: 200, member: 403, operator: 200, nobody: 401, otherAdmin: 404 } },
    { name: "workspace list", method: "GET", route: () => "/console/api/workspaces", expected: { admin: 200, member: 200, operator: 200, nobody: 401, otherAdmin: 200 } },
    // The service's deployments are the operator's alone: no role in any workspace shows them.
    { name: "upstreams", method: "GET", route: () => "/console/api/upstreams", expected: { admin: 403, member: 403, operator: 200, nobody: 401, otherAdmin: 403 } },
    {
      name: "create workspace",
      method: "POST",
      route: () => "/console/api/workspaces",
      body: { name: "Made in the console" },
      expected: { admin: 403, member: 403, operator: 201, nobody: 401, otherAdmin: 403 }
    }
  ]

  for (const testCase of cases) {
    it(`${testCase.method} ${testCase.name}`, async () => {
      for (const role of roles) {
        const route = await testCase.route(role)
        const answer = await consoleCall(app.current, testCase.method, route, {
          cookie: cookies[role],
          ...(testCase.body !== undefined ? { body: testCase.body } : {})
        })
        expect(answer.status, `${role}: ${JSON.stringify(answer.body)}`).toBe(testCase.expected[role])
        if (answer.status >= 400) {
          expect(answer.body).toEqual({ error: { code: expect.any(String), message: expect.any(String) } })
        }
      }
    })
  }

  it("counts console exports against the workspace's usage-export limit, as the public endpoints do", async () => {
    const e = (await createWorkspace(app.current, "Echo", { rateLimits: { families: { usage_export: { requestsPerMinute: 2 } } } })).id
    const admin = await invitePerson(app.current, e, "admin@echo.example", "admin")
    await call(app.current, "POST", `/admin/workspaces/${e}/events`, {
      token: testAdminToken,
      body: { events: [{ type: "message", id: "e1", occurredAt: "2026-01-05T10:00:00Z", user: { id: "u1" }, model: "chatgen-4o", inputTokens: 1, outputTokens: 2 }] }
    })
    const first = await consoleCall(app.current, "POST", `/console/api/workspaces/${e}/exports/users`, { cookie: admin.cookie, body: exportBody })
    expect(first.status).toBe(200)
    expect(first.headers.get("x-ratelimit-remaining-requests")).toBe("1")
    // The limit is the workspace's: a public export spends from the same budget.
    const key = await createKey(app.current, e, ["USAGE_EXPORT_API"], "reports")
    expect((await call(app.current, "POST", "/export/users", { token: key.key, body: exportBody })).status).toBe(200)
    const refused = await consoleCall(app.current, "POST", `/console/api/workspaces/${e}/exports/users`, { cookie: admin.cookie, body: exportBody })
    expect(refused.status).toBe(429)
    expect(refused.body.error.code).toBe("rate_limit_exceeded")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
  })

  it("lists the workspace's exports, console and public, while their links live, each signed again", async () => {
    const d = (await createWorkspace(app.current, "Delta")).id
    const admin = await invitePerson(app.current, d, "admin@delta.example", "admin")
    await call(app.current, "POST", `/admin/workspaces/${d}/events`, {
      token: testAdminToken,
      body: { events: [{ type: "message", id: "e1", occurredAt: "2026-01-05T10:00:00Z", user: { id: "u1" }, model: "chatgen-4o", inputTokens: 1, outputTokens: 2 }] }
    })
    const empty = await consoleCall(app.current, "GET", `/console/api/workspaces/${d}/exports`, { cookie: admin.cookie })
    expect(empty.body).toEqual({ data: [] })
    const ran = await consoleCall(app.current, "POST", `/console/api/workspaces/${d}/exports/users`, { cookie: admin.cookie, body: exportBody })
    expect(ran.status).toBe(200)
    const key = await createKey(app.current, d, ["USAGE_EXPORT_API"], "reports")
    const publicRun = await call(app.current, "POST", "/export/models", { token: key.key, body: { ...exportBody, from: { date: "2026-01-01", timezone: "Europe/Berlin" } } })
    expect(publicRun.status).toBe(200)

    const listed = await consoleCall(app.current, "GET", `/console/api/workspaces/${d}/exports`, { cookie: admin.cookie })
    expect(listed.status).toBe(200)
    expect(listed.body.data.map((e: { dataType: string; createdBy: string; timezone: string }) => [e.dataType, e.createdBy, e.timezone])).toEqual([
      ["models", expect.stringMatching(/^API key reports \(/), "Europe/Berlin"],
      ["users", "admin@delta.example", "UTC"]
    ])
    const [, users] = listed.body.data
    expect(users).toMatchObject({ filePath: ran.body.data.filePath, recordCount: ran.body.data.recordCount, dateRange: ran.body.data.dateRange })
    // The link is signed again, with the first link's expiry, and it downloads the file.
    expect(new URL(users.downloadUrl).searchParams.get("expires")).toBe(new URL(ran.body.data.downloadUrl).searchParams.get("expires"))
    expect(Date.parse(users.expiresAt)).toBe(Number(new URL(ran.body.data.downloadUrl).searchParams.get("expires")) * 1000)
    const download = await fetch(users.downloadUrl)
    expect(download.status).toBe(200)
    expect((await download.text()).split("\n").filter((line) => line !== "").length).toBe(users.recordCount + 1)
    expect((await consoleCall(app.current, "GET", `/console/api/workspaces/${d}/exports?limit=1`, { cookie: admin.cookie })).body.data).toHaveLength(1)

    // An expired link leaves the list.
    await query(app.current.env.DATABASE_URL!, "UPDATE export_runs SET link_expires_at = now() - interval '1 second' WHERE file_path = $1", [users.filePath])
    const later = await consoleCall(app.current, "GET", `/console/api/workspaces/${d}/exports`, { cookie: admin.cookie })
    expect(later.body.data.map((e: { dataType: string }) => e.dataType)).toEqual(["models"])
  })

  it("members see and revoke only their own keys; every key records who created it", async () => {
    const own = await consoleCall(app.current, "POST", `/console/api/workspaces/${a}/api-keys`, {
      cookie: cookies.member,
      body: { name: "mine", scopes: ["COMPLETION_API"] }
    })
    expect(own.status).toBe(201)
    expect(own.body).toMatchObject({ key: expect.stringMatching(/^wsk_/), createdBy: "member@alpha.example", scopes: ["COMPLETION_API"] })
    const listed = await consoleCall(app.current, "GET", `/console/api/workspaces/${a}/api-keys`, { cookie: cookies.member })
    expect(listed.body.data.length).toBeGreaterThan(0)
    expect(listed.body.data.every((k: { createdBy: string }) => k.createdBy === "member@alpha.example")).toBe(true)
    expect(JSON.stringify(listed.body)).not.toContain(own.body.key)
    const all = await consoleCall(app.current, "GET", `/console/api/workspaces/${a}/api-keys`, { cookie: cookies.admin })
    expect(new Set(all.body.data.map((k: { createdBy: string }) => k.createdBy))).toEqual(
      new Set(["operator", "admin@alpha.example", "member@alpha.example"])
    )
    const revoked = await consoleCall(app.current, "DELETE", `/console/api/workspaces/${a}/api-keys/${own.body.id}`, { cookie: cookies.member })
    expect(revoked.status).toBe(200)
    expect(revoked.body.revokedAt).not.toBeNull()
    // The revoked key no longer works, once the key lookups cached for up to a second have gone.
    const chat = await eventually(
      () => call(app.current, "POST", "/provider_a/eu/v1/chat/completions", {
        token: own.body.key,
        body: { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] }
      }),
      (answer) => answer.status !== 200,
      5_000
    )
    expect(chat.status).toBe(401)
  })

  it("protects the last admin, and a removal ends the person's sessions at once", async () => {
    const c = (await createWorkspace(app.current, "Gamma")).id
    const admin = await invitePerson(app.current, c, "solo@gamma.example", "admin")
    const demote = await consoleCall(app.current, "PATCH", `/console/api/workspaces/${c}/members/${admin.memberId}`, { cookie: admin.cookie, body: { role: "member" } })
    expect(demote.status).toBe(409)
    expect(demote.body.error.code).toBe("last_admin")
    const remove = await call(app.current, "DELETE", `/admin/workspaces/${c}/members/${admin.memberId}`, { token: testAdminToken })
    expect(remove.status).toBe(409)

    const member = await invitePerson(app.current, c, "leaving@gamma.example", "member")
    expect((await consoleCall(app.current, "GET", `/console/api/workspaces/${c}`, { cookie: member.cookie })).status).toBe(200)
    const removed = await consoleCall(app.current, "DELETE", `/console/api/workspaces/${c}/members/${member.memberId}`, { cookie: admin.cookie })
    expect(removed.status).toBe(200)
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie: member.cookie })).status).toBe(401)

    // With a second active admin, the first may step down.
    const second = await invitePerson(app.current, c, "second@gamma.example", "admin")
    expect((await consoleCall(app.current, "PATCH", `/console/api/workspaces/${c}/members/${admin.memberId}`, { cookie: second.cookie, body: { role: "member" } })).status).toBe(200)
    const listed = await consoleCall(app.current, "GET", `/console/api/workspaces/${c}/members`, { cookie: second.cookie })
    expect(listed.body.data.map((m: { email: string; role: string; status: string }) => [m.email, m.role, m.status])).toEqual([
      ["second@gamma.example", "admin", "active"],
      ["solo@gamma.example", "member", "active"]
    ])
  })

  it("one person in two workspaces sees both; the operator lists every workspace with search and paging", async () => {
    const d = (await createWorkspace(app.current, "Delta")).id
    await call(app.current, "POST", `/admin/workspaces/${d}/members`, { token: testAdminToken, body: { email: "admin@alpha.example", role: "member" } })
    // Invited, not yet accepted: not in the list.
    const before = await consoleCall(app.current, "GET", "/console/api/workspaces", { cookie: cookies.admin })
    expect(before.body.data.map((w: { id: string }) => w.id)).toEqual([a])

    const page1 = await consoleCall(app.current, "GET", "/console/api/workspaces?limit=2", { cookie: cookies.operator })
    expect(page1.body.data).toHaveLength(2)
    expect(page1.body.nextCursor).toEqual(expect.any(String))
    const page2 = await consoleCall(app.current, "GET", `/console/api/workspaces?limit=2&cursor=${page1.body.nextCursor}`, { cookie: cookies.operator })
    expect(page2.body.data.map((w: { id: string }) => w.id)).not.toContain(page1.body.data[0].id)
    const searched = await consoleCall(app.current, "GET", "/console/api/workspaces?search=alph", { cookie: cookies.operator })
    expect(searched.body.data.map((w: { name: string }) => w.name)).toEqual(["Alpha"])

    const admin = await call(app.current, "GET", "/admin/workspaces?search=ALPHA&limit=5", { token: testAdminToken })
    expect(admin.status).toBe(200)
    expect(admin.body).toEqual({ data: [expect.objectContaining({ id: a, name: "Alpha" })], nextCursor: null })
    const all: Array<string> = []
    let cursor: string | null = null
    do {
      const page: { body: { data: Array<{ id: string }>; nextCursor: string | null } } = await call(
        app.current,
        "GET",
        `/admin/workspaces?limit=1${cursor ? `&cursor=${cursor}` : ""}`,
        { token: testAdminToken }
      )
      all.push(...page.body.data.map((w) => w.id))
      cursor = page.body.nextCursor
    } while (cursor !== null)
    expect(new Set(all).size).toBe(all.length)
    expect(all).toEqual(expect.arrayContaining([a, b, d]))
  })

  it("audits changes with actor, time, address and target, never a secret", async () => {
    expect((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "admin@alpha.example", password } })).status).toBe(200)
    const created = await consoleCall(app.current, "POST", `/console/api/workspaces/${a}/api-keys`, {
      cookie: cookies.admin,
      body: { name: "audited", scopes: ["COMPLETION_API"] }
    })
    const audit = await consoleCall(app.current, "GET", `/console/api/workspaces/${a}/audit?action=api_key.created&limit=1`, { cookie: cookies.admin })
    expect(audit.body.data).toEqual([{
      at: expect.any(String),
      actor: "admin@alpha.example",
      action: "api_key.created",
      target: expect.stringContaining("audited"),
      address: expect.any(String)
    }])
    expect(audit.body.nextCursor).toEqual(expect.any(String))
    const all = await call(app.current, "GET", `/admin/workspaces/${a}/audit?limit=200`, { token: testAdminToken })
    const actions = new Set(all.body.data.map((e: { action: string }) => e.action))
    for (const action of ["invitation.accepted", "session.signed_in", "api_key.created", "api_key.revoked", "member.invited", "member.changed", "member.removed", "settings.changed", "export.run"]) {
      expect(actions, action).toContain(action)
    }
    expect(JSON.stringify(all.body)).not.toContain(created.body.key)
    expect(JSON.stringify(all.body)).not.toContain("correct horse")
  })

  it("settings carry the time zone and the limits with what remains now", async () => {
    const settings = await consoleCall(app.current, "GET", `/console/api/workspaces/${a}/settings`, { cookie: cookies.admin })
    expect(settings.body).toMatchObject({ anonymizeUsers: false, timezone: expect.any(String) })
    expect(settings.body.limits).toContainEqual({
      family: "chat_completions",
      model: null,
      requestsPerMinute: 500,
      tokensPerMinute: 60000,
      remainingRequests: expect.any(Number),
      remainingTokens: expect.any(Number)
    })
    const bad = await consoleCall(app.current, "PATCH", `/console/api/workspaces/${a}/settings`, { cookie: cookies.admin, body: { timezone: "+01:00" } })
    expect(bad.status).toBe(400)
    const admin = await call(app.current, "GET", `/admin/workspaces/${b}`, { token: testAdminToken })
    expect(admin.body.settings.timezone).toBe("UTC")
  })

  it("is in the OpenAPI document", async () => {
    const doc = await call(app.current, "GET", "/openapi.json")
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining([
      "/console/api/session",
      "/console/api/invitations/{token}",
      "/console/api/workspaces",
      "/console/api/workspaces/{id}/usage",
      "/console/api/workspaces/{id}/members/{memberId}",
      "/admin/workspaces/{id}/members",
      "/admin/workspaces/{id}/audit"
    ]))
  })

  it("usage and activity sum the ledger into local days of the asked zone", async () => {
    const e = (await createWorkspace(app.current, "Usage")).id
    const key = await createKey(app.current, e, ["COMPLETION_API"], "the key")
    // 23:30 UTC on Jan 5 is Jan 6 in Berlin; 05:00 UTC is Jan 5 in both; Kolkata (+05:30) cuts at 18:30 UTC.
    await query(app.current.env.DATABASE_URL!, `
      INSERT INTO api_requests (workspace_id, key_id, endpoint, provider, region, model, status, input_tokens, output_tokens, cost_usd, latency_ms, created_at)
      VALUES ($1, $2, 'chat_completions', 'provider_a', 'eu', 'chatgen-4o', 200, 100, 10, 0.5, 5, '2026-01-05T05:00:00Z'),
             ($1, $2, 'chat_completions', 'provider_a', 'eu', 'chatgen-4o', 200, 200, 20, 0.25, 5, '2026-01-05T23:30:00Z'),
             ($1, $2, 'messages', 'provider_b', 'eu', 'assistantmodel-3-5-haiku', 500, 1, 0, 0, 5, '2026-01-05T18:45:00Z')`, [e, key.id])
    const admin = await consoleCall(app.current, "POST", "/console/api/session", { body: { adminToken: testAdminToken } })
    const cookie = (admin.headers.get("set-cookie") ?? "").split(";")[0]!
    const utc = await consoleCall(app.current, "GET", `/console/api/workspaces/${e}/usage?from=2026-01-05&to=2026-01-07&timezone=UTC&groupBy=model`, { cookie })
    expect(utc.body.data).toEqual([
      { day: "2026-01-05", group: "assistantmodel-3-5-haiku", requests: 1, inputTokens: 1, outputTokens: 0, costUsd: 0 },
      { day: "2026-01-05", group: "chatgen-4o", requests: 2, inputTokens: 300, outputTokens: 30, costUsd: 0.75 }
    ])
    const berlin = await consoleCall(app.current, "GET", `/console/api/workspaces/${e}/usage?from=2026-01-05&to=2026-01-07&timezone=Europe/Berlin&groupBy=family`, { cookie })
    expect(berlin.body.data.map((r: { day: string; group: string; requests: number }) => [r.day, r.group, r.requests])).toEqual([
      ["2026-01-05", "chat_completions", 1],
      ["2026-01-05", "messages", 1],
      ["2026-01-06", "chat_completions", 1]
    ])
    const kolkata = await consoleCall(app.current, "GET", `/console/api/workspaces/${e}/usage?from=2026-01-05&to=2026-01-07&timezone=Asia/Kolkata&groupBy=apiKey`, { cookie })
    expect(kolkata.body.data).toEqual([
      { day: "2026-01-05", group: key.id, label: "the key", requests: 1, inputTokens: 100, outputTokens: 10, costUsd: 0.5 },
      { day: "2026-01-06", group: key.id, label: "the key", requests: 2, inputTokens: 201, outputTokens: 20, costUsd: 0.25 }
    ])
    const reversed = await consoleCall(app.current, "GET", `/console/api/workspaces/${e}/usage?from=2026-01-07&to=2026-01-05`, { cookie })
    expect(reversed.status).toBe(400)
    expect(reversed.body.error.field).toBe("to")

    const activity = await consoleCall(app.current, "GET", `/console/api/workspaces/${a}/activity?from=2026-01-01&to=2026-02-01&timezone=UTC`, { cookie })
    expect(activity.body.data).toEqual([{ day: "2026-01-05", messages: 1, activeUsers: 1, inputTokens: 10, outputTokens: 20 }])

    // Active users per local day: 10:00Z, 18:40Z (u1) and 20:00Z (u2) are one day in UTC, two in Kolkata.
    const message = (id: string, user: string, occurredAt: string) =>
      ({ type: "message", id, occurredAt, user: { id: user }, model: "chatgen-4o", inputTokens: 1, outputTokens: 1 })
    await call(app.current, "POST", `/admin/workspaces/${e}/events`, {
      token: testAdminToken,
      body: { events: [message("x1", "u1", "2026-01-05T10:00:00Z"), message("x2", "u1", "2026-01-05T18:40:00Z"), message("x3", "u2", "2026-01-05T20:00:00Z")] }
    })
    const days = async (timezone: string) =>
      (await consoleCall(app.current, "GET", `/console/api/workspaces/${e}/activity?from=2026-01-04&to=2026-01-08&timezone=${timezone}`, { cookie }))
        .body.data.map((r: { day: string; messages: number; activeUsers: number }) => [r.day, r.messages, r.activeUsers])
    expect(await days("UTC")).toEqual([["2026-01-05", 3, 2]])
    expect(await days("Asia/Kolkata")).toEqual([["2026-01-05", 1, 1], ["2026-01-06", 2, 2]])
    expect(await days("America/Los_Angeles")).toEqual([["2026-01-05", 3, 2]])
    expect(await days("Pacific/Kiritimati")).toEqual([["2026-01-06", 3, 2]])

    // DST days (23 hours: read from the bitmaps) beside 24-hour ones (read from the per-day counts),
    // in two batches: the second recounts the days the first touched.
    await call(app.current, "POST", `/admin/workspaces/${e}/events`, {
      token: testAdminToken,
      body: { events: [message("d1", "u3", "2026-03-28T23:30:00Z"), message("d2", "u3", "2026-03-29T22:30:00Z")] }
    })
    await call(app.current, "POST", `/admin/workspaces/${e}/events`, {
      token: testAdminToken,
      body: { events: [message("d3", "u4", "2026-03-29T23:30:00Z"), message("d4", "u3", "2026-03-30T12:00:00Z")] }
    })
    const spring = async (timezone: string) =>
      (await consoleCall(app.current, "GET", `/console/api/workspaces/${e}/activity?from=2026-03-27&to=2026-04-01&timezone=${timezone}`, { cookie }))
        .body.data.map((r: { day: string; messages: number; activeUsers: number }) => [r.day, r.messages, r.activeUsers])
    // Berlin's March 29 is 23:00Z–22:00Z; London's is 00:00Z–23:00Z.
    expect(await spring("Europe/Berlin")).toEqual([["2026-03-29", 1, 1], ["2026-03-30", 3, 2]])
    expect(await spring("Europe/London")).toEqual([["2026-03-28", 1, 1], ["2026-03-29", 1, 1], ["2026-03-30", 2, 2]])
    expect(await spring("UTC")).toEqual([["2026-03-28", 1, 1], ["2026-03-29", 2, 2], ["2026-03-30", 1, 1]])
    expect(await spring("Asia/Kolkata")).toEqual([["2026-03-29", 1, 1], ["2026-03-30", 3, 2]])
  })

  it("counts active users as the ledger does in every kind of zone, whatever the batches and their order", async () => {
    const w = (await createWorkspace(app.current, "Zones")).id
    // Deterministic pseudo-random messages over two DST seasons, sent as concurrent batches out of order.
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    const windows = [Date.parse("2026-03-26T00:00:00Z"), Date.parse("2026-10-22T00:00:00Z")]
    const events = Array.from({ length: 600 }, (_, i) => ({
      type: "message",
      id: `z${i}`,
      occurredAt: new Date(windows[i % 2]! + Math.floor(next() * 14 * 96) * 900_000 + Math.floor(next() * 900_000)).toISOString(),
      user: { id: `u${Math.floor(next() * next() * 40)}` },
      model: "chatgen-4o",
      inputTokens: 1,
      outputTokens: 1
    }))
    const batches = Array.from({ length: 6 }, (_, b) => events.filter((_, i) => i % 6 === b))
    const sent = await Promise.all(batches.map((batch) =>
      call(app.current, "POST", `/admin/workspaces/${w}/events`, { token: testAdminToken, body: { events: batch } })))
    expect(sent.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200])
    const cookie = await operatorCookie(app.current)
    // Whole-hour, half-hour and 45-minute offsets, a 30-minute DST shift (Lord Howe), both hemispheres.
    const zones = ["UTC", "Europe/Berlin", "Europe/London", "America/Los_Angeles", "Asia/Kolkata", "Asia/Kathmandu",
      "Australia/Lord_Howe", "Pacific/Chatham", "Pacific/Kiritimati", "America/St_Johns"]
    for (const timezone of zones) {
      for (const [from, to] of [["2026-03-25", "2026-04-10"], ["2026-10-21", "2026-11-06"]] as const) {
        const answer = await consoleCall(app.current, "GET", `/console/api/workspaces/${w}/activity?from=${from}&to=${to}&timezone=${timezone}`, { cookie })
        const ledger = await query<{ day: string; messages: number; users: number }>(
          app.current.env.DATABASE_URL!,
          `SELECT to_char(occurred_at AT TIME ZONE $2, 'YYYY-MM-DD') AS day, count(*)::int AS messages, count(DISTINCT user_ref)::int AS users
           FROM message_events WHERE workspace_id = $1 AND occurred_at >= ($3::timestamp AT TIME ZONE $2) AND occurred_at < ($4::timestamp AT TIME ZONE $2)
           GROUP BY 1 ORDER BY 1`,
          [w, timezone, from, to]
        )
        expect(
          answer.body.data.map((r: { day: string; messages: number; activeUsers: number }) => [r.day, r.messages, r.activeUsers]),
          `${timezone} ${from}`
        ).toEqual(ledger.map((r) => [r.day, r.messages, r.users]))
      }
    }
  })
})
