import { describe, expect, it } from "vitest"
import { useApp, call, createKey, createWorkspace, testAdminToken } from "../support/app"

// The admin API over the in-memory stores: the same answers as over PostgreSQL (test/integration/apiKeys.test.ts,
// adminSettings.test.ts), without a database.
describe("admin API on the in-memory app", () => {
  const app = useApp()

  it("is live and ready without a database", async () => {
    expect(await call(app.current, "GET", "/healthz")).toMatchObject({ status: 200, body: { status: "ok" } })
    const ready = await call(app.current, "GET", "/readyz")
    expect(ready.status).toBe(200)
    expect(ready.body).toEqual({ status: "ready", migration: expect.any(Number) })
  })

  it("creates, lists, finds and updates workspaces", async () => {
    const created = await createWorkspace(app.current, "Memory Acme", { timezone: "Europe/Berlin" })
    expect(created).toMatchObject({ name: "Memory Acme", settings: { timezone: "Europe/Berlin", anonymizeUsers: false } })
    expect(await call(app.current, "GET", `/admin/workspaces/${created.id}`, { token: testAdminToken })).toMatchObject({
      status: 200,
      body: { id: created.id, name: "Memory Acme" }
    })
    const listed = await call(app.current, "GET", "/admin/workspaces?search=memory%20acme", { token: testAdminToken })
    expect(listed.status).toBe(200)
    expect(listed.body.data.map((w: { id: string }) => w.id)).toEqual([created.id])

    const patched = await call(app.current, "PATCH", `/admin/workspaces/${created.id}`, {
      token: testAdminToken,
      body: { settings: { anonymizeUsers: true } }
    })
    expect(patched.status).toBe(200)
    expect(patched.body.settings).toMatchObject({ anonymizeUsers: true, timezone: "Europe/Berlin" })
    const unknownSetting = await call(app.current, "PATCH", `/admin/workspaces/${created.id}`, {
      token: testAdminToken,
      body: { settings: { noSuchSetting: true } }
    })
    expect(unknownSetting.status).toBe(400)
    expect((await call(app.current, "GET", "/admin/workspaces/00000000-0000-4000-8000-000000000000", { token: testAdminToken })).status)
      .toBe(404)
  })

  it("creates keys shown once, lists them without the secret, revokes them", async () => {
    const workspace = await createWorkspace(app.current)
    const key = await createKey(app.current, workspace.id, ["COMPLETION_API", "USAGE_EXPORT_API"], "ci")
    expect(key.key).toMatch(/^wsk_/)
    const listed = await call(app.current, "GET", `/admin/workspaces/${workspace.id}/api-keys`, { token: testAdminToken })
    expect(listed.status).toBe(200)
    expect(JSON.stringify(listed.body)).not.toContain(key.key)
    expect(listed.body.data).toEqual([expect.objectContaining({ id: key.id, name: "ci", revokedAt: null })])
    const revoked = await call(app.current, "DELETE", `/admin/workspaces/${workspace.id}/api-keys/${key.id}`, { token: testAdminToken })
    expect(revoked.status).toBe(200)
    expect(revoked.body.revokedAt).toEqual(expect.any(String))
  })

  it("refuses a missing or wrong admin token", async () => {
    expect((await call(app.current, "GET", "/admin/workspaces")).status).toBe(401)
    expect((await call(app.current, "GET", "/admin/workspaces", { token: "wrong" })).status).toBe(401)
  })
})
