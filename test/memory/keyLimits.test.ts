import ProviderAClient from "openai"
import { describe, expect, it } from "vitest"
import { call, createWorkspace, testAdminToken, useApp } from "../support/app"
import { eventually } from "../support/fakeUpstream"

// A key's budget and expiry through the admin API, on the in-memory app with the simulator upstream: what is
// refused at the boundary (400 naming the field), and a key past its expiry refused like a revoked one (401).

const keysOf = (workspaceId: string) => `/admin/workspaces/${workspaceId}/api-keys`

describe("a key's budget and expiry", () => {
  const app = useApp()
  const chat = (key: string) =>
    new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 }).chat.completions.create({
      model: "chatgen-4o-mini",
      max_tokens: 5,
      messages: [{ role: "user", content: "hello" }]
    }).then(() => 200, (error: { status?: number }) => error.status)

  it("refuse a bad budget or expiry with 400 naming the field", async () => {
    const { id } = await createWorkspace(app.current)
    const create = (body: Record<string, unknown>) =>
      call(app.current, "POST", keysOf(id), { token: testAdminToken, body: { name: "k", scopes: ["COMPLETION_API"], ...body } })
    const cases: ReadonlyArray<[Record<string, unknown>, RegExp]> = [
      [{ budget: { amountUsd: -1, period: "day" } }, /amountUsd/],
      [{ budget: { amountUsd: 10, period: "year" } }, /period/],
      [{ budget: { amountUsd: 10, period: "day", alertThresholds: [1.5] } }, /alertThresholds/],
      [{ budget: { amountUsd: 10, period: "day", currency: "EUR" } }, /currency/],
      [{ expiresAt: "tomorrow" }, /expiresAt/],
      [{ expiresAt: "2020-01-01T00:00:00Z" }, /expiresAt .* is in the past/]
    ]
    for (const [body, named] of cases) {
      const refused = await create(body)
      expect(refused.status, JSON.stringify(body)).toBe(400)
      expect(JSON.stringify(refused.body), JSON.stringify(body)).toMatch(named)
    }
    const settings = await call(app.current, "PATCH", `/admin/workspaces/${id}`, {
      token: testAdminToken,
      body: { settings: { budget: { amountUsd: 0, period: "week" } } }
    })
    expect(settings.status).toBe(400)
    expect(JSON.stringify(settings.body)).toMatch(/amountUsd/)
  })

  it("keep, change and list a key's budget and expiry; the workspace's budget in its settings", async () => {
    const { id } = await createWorkspace(app.current)
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
    const created = await call(app.current, "POST", keysOf(id), {
      token: testAdminToken,
      body: { name: "k", scopes: ["COMPLETION_API"], budget: { amountUsd: 12.5, period: "week", alertThresholds: [0.8, 1] }, expiresAt }
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ budget: { amountUsd: 12.5, period: "week", alertThresholds: [0.8, 1] }, spentUsd: 0, expiresAt })
    const changed = await call(app.current, "PATCH", `${keysOf(id)}/${created.body.id}`, { token: testAdminToken, body: { budget: null } })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({ budget: null, spentUsd: null, expiresAt })
    expect((await call(app.current, "GET", keysOf(id), { token: testAdminToken })).body.data).toMatchObject([{ budget: null, expiresAt }])
    const unknown = await call(app.current, "PATCH", `${keysOf(id)}/${crypto.randomUUID()}`, { token: testAdminToken, body: { budget: null } })
    expect(unknown.status).toBe(404)
    const patched = await call(app.current, "PATCH", `/admin/workspaces/${id}`, {
      token: testAdminToken,
      body: { settings: { budget: { amountUsd: 100, period: "month" } } }
    })
    expect(patched.body.settings.budget).toEqual({ amountUsd: 100, period: "month" })
  })

  it("refuse a key past its expiry like a revoked one (401), also when the expiry is moved into the past", async () => {
    const { id } = await createWorkspace(app.current)
    const soon = await call(app.current, "POST", keysOf(id), {
      token: testAdminToken,
      body: { name: "soon", scopes: ["COMPLETION_API"], expiresAt: new Date(Date.now() + 1_500).toISOString() }
    })
    expect(await chat(soon.body.key)).toBe(200)
    await eventually(() => chat(soon.body.key), (status) => status === 401)

    const later = await call(app.current, "POST", keysOf(id), {
      token: testAdminToken,
      body: { name: "later", scopes: ["COMPLETION_API"], expiresAt: new Date(Date.now() + 86_400_000).toISOString() }
    })
    expect(await chat(later.body.key)).toBe(200)
    const moved = await call(app.current, "PATCH", `${keysOf(id)}/${later.body.id}`, {
      token: testAdminToken,
      body: { expiresAt: new Date(Date.now() - 1_000).toISOString() }
    })
    expect(moved.status).toBe(200)
    await eventually(() => chat(later.body.key), (status) => status === 401)
  })
})
