import ProviderAClient from "openai"
import { describe, expect, it } from "vitest"
import { consoleCall, invitePerson } from "../support/console"
import { call, createWorkspace, testAdminToken, useApp } from "../support/app"
import { eventually } from "../support/fakeUpstream"

// Budgets through the console API on the in-memory app: the workspace's budget set by an admin and read by a
// member with what is spent and reserved; a member's budget and expiry on their own keys only.

describe("budgets in the console API", () => {
  const app = useApp()

  it("lets an admin set the workspace budget and a member read it with what its period spent", async () => {
    const { id } = await createWorkspace(app.current, "Console budgets")
    const admin = await invitePerson(app.current, id, "admin@budgets.example", "admin")
    const member = await invitePerson(app.current, id, "member@budgets.example", "member")
    const none = await consoleCall(app.current, "GET", `/console/api/workspaces/${id}/budget`, { cookie: member.cookie })
    expect(none.body).toEqual({ budget: null, spentUsd: null, reservedUsd: null, periodStart: null, resetAt: null })
    const refused = await consoleCall(app.current, "PATCH", `/console/api/workspaces/${id}/settings`, {
      cookie: member.cookie,
      body: { budget: { amountUsd: 5, period: "day" } }
    })
    expect(refused.status).toBe(403)
    const saved = await consoleCall(app.current, "PATCH", `/console/api/workspaces/${id}/settings`, {
      cookie: admin.cookie,
      body: { budget: { amountUsd: 5, period: "day" } }
    })
    expect(saved.status).toBe(200)
    expect(saved.body.budget).toEqual({ amountUsd: 5, period: "day" })

    // A request counts once the key's view of the settings is fresh (within a second).
    const { key } = (await call(app.current, "POST", `/admin/workspaces/${id}/api-keys`, {
      token: testAdminToken,
      body: { name: "k", scopes: ["COMPLETION_API"] }
    })).body as { key: string }
    const client = new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
    const spent = await eventually(async () => {
      await client.chat.completions.create({ model: "chatgen-4o-mini", max_tokens: 20, messages: [{ role: "user", content: "hi" }] })
      return (await consoleCall(app.current, "GET", `/console/api/workspaces/${id}/budget`, { cookie: member.cookie })).body
    }, (status) => status.spentUsd > 0)
    expect(spent).toMatchObject({ budget: { amountUsd: 5, period: "day" } })
    // With no request in progress, the instance's slice of the budget is written back: nothing stays reserved.
    const idle = await eventually(
      async () => (await consoleCall(app.current, "GET", `/console/api/workspaces/${id}/budget`, { cookie: member.cookie })).body,
      (status) => status.reservedUsd === 0
    )
    expect(idle.spentUsd).toBeGreaterThan(0)
    expect(Date.parse(spent.resetAt) - Date.parse(spent.periodStart)).toBe(86_400_000)
  })

  it("lets a member set a budget and expiry on their own keys only", async () => {
    const { id } = await createWorkspace(app.current, "Member keys")
    const member = await invitePerson(app.current, id, "member@keys.example", "member")
    const other = await call(app.current, "POST", `/admin/workspaces/${id}/api-keys`, {
      token: testAdminToken,
      body: { name: "operator's", scopes: ["COMPLETION_API"] }
    })
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
    const own = await consoleCall(app.current, "POST", `/console/api/workspaces/${id}/api-keys`, {
      cookie: member.cookie,
      body: { name: "mine", scopes: ["COMPLETION_API"], budget: { amountUsd: 2, period: "week" }, expiresAt }
    })
    expect(own.status).toBe(201)
    expect(own.body).toMatchObject({ budget: { amountUsd: 2, period: "week" }, spentUsd: 0, expiresAt })
    const changed = await consoleCall(app.current, "PATCH", `/console/api/workspaces/${id}/api-keys/${own.body.id}`, {
      cookie: member.cookie,
      body: { budget: { amountUsd: 3, period: "month" }, expiresAt: null }
    })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({ budget: { amountUsd: 3, period: "month" }, expiresAt: null })
    const notTheirs = await consoleCall(app.current, "PATCH", `/console/api/workspaces/${id}/api-keys/${other.body.id}`, {
      cookie: member.cookie,
      body: { budget: null }
    })
    expect(notTheirs.status).toBe(404)
  })
})
