import { describe, expect, it } from "vitest"
import { call, createWorkspace, testAdminToken, useApp } from "../support/app"
import { consoleCall, invitePerson } from "../support/console"

const admin = (app: Parameters<typeof call>[0], method: string, route: string, body?: unknown) =>
  call(app, method, route, { token: testAdminToken, ...(body === undefined ? {} : { body }) })

describe("webhooks through the admin API (in-memory app)", () => {
  const app = useApp()

  it("creates a webhook with its secret shown once, lists it without the secret, removes it; each audited", async () => {
    const { id } = await createWorkspace(app.current, "Hooks")
    const created = await admin(app.current, "POST", `/admin/workspaces/${id}/webhooks`, { url: "https://hooks.example.com/budget" })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ url: "https://hooks.example.com/budget", events: ["budget.threshold_reached"] })
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const listed = await admin(app.current, "GET", `/admin/workspaces/${id}/webhooks`)
    expect(listed.body.data).toEqual([{ id: created.body.id, url: created.body.url, events: created.body.events, createdAt: created.body.createdAt }])
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret)
    const deliveries = await admin(app.current, "GET", `/admin/workspaces/${id}/webhooks/${created.body.id}/deliveries`)
    expect(deliveries).toMatchObject({ status: 200, body: { data: [] } })

    const removed = await admin(app.current, "DELETE", `/admin/workspaces/${id}/webhooks/${created.body.id}`)
    expect(removed.status).toBe(200)
    expect(removed.body.secret).toBeUndefined()
    expect((await admin(app.current, "GET", `/admin/workspaces/${id}/webhooks`)).body.data).toEqual([])
    const again = await admin(app.current, "DELETE", `/admin/workspaces/${id}/webhooks/${created.body.id}`)
    expect(again.status).toBe(404)
    expect(again.body.error.code).toBe("webhook_not_found")
    expect((await admin(app.current, "GET", `/admin/workspaces/${id}/webhooks/${created.body.id}/deliveries`)).status).toBe(404)
    const audit = await admin(app.current, "GET", `/admin/workspaces/${id}/audit`)
    expect(audit.body.data.slice(0, 2).map((e: { action: string; target: string }) => [e.action, e.target])).toEqual([
      ["webhook.removed", "https://hooks.example.com/budget"],
      ["webhook.created", "https://hooks.example.com/budget"]
    ])
  })

  it("refuses plain http, other schemes, no URL and private or loopback targets with 400 naming url", async () => {
    const { id } = await createWorkspace(app.current, "Refused hooks")
    const route = `/admin/workspaces/${id}/webhooks`
    for (const url of ["http://hooks.example.com/x", "ftp://hooks.example.com/x", "https://127.0.0.1/x", "https://10.0.0.8/x", "https://[::1]/x", "https://localhost/x", "https://169.254.169.254/latest"]) {
      const refused = await admin(app.current, "POST", route, { url })
      expect(refused.status, url).toBe(400)
      expect(refused.body.error, url).toMatchObject({ code: "invalid_webhook_url", field: "url" })
    }
    for (const body of [{}, { url: "" }, { url: 42 }, { url: "https://hooks.example.com/x", events: ["usage.spent"] }]) {
      const refused = await admin(app.current, "POST", route, body)
      expect(refused.status, JSON.stringify(body)).toBe(400)
    }
    expect((await admin(app.current, "POST", route, {})).body.error.message).toContain("url")
    expect((await admin(app.current, "GET", route)).body.data).toEqual([])
    expect((await admin(app.current, "POST", "/admin/workspaces/00000000-0000-4000-8000-000000000000/webhooks", { url: "https://hooks.example.com/x" })).status)
      .toBe(404)
  })
})

describe("webhooks in the console (in-memory app)", () => {
  const app = useApp()

  it("are an admin's: members are refused (403), admins create, list, read deliveries and remove", async () => {
    const { id } = await createWorkspace(app.current, "Console hooks")
    const kim = await invitePerson(app.current, id, "kim@example.com", "admin")
    const max = await invitePerson(app.current, id, "max@example.com", "member")
    const route = `/console/api/workspaces/${id}/webhooks`
    expect((await consoleCall(app.current, "GET", route, { cookie: max.cookie })).status).toBe(403)
    expect((await consoleCall(app.current, "POST", route, { cookie: max.cookie, body: { url: "https://hooks.example.com/x" } })).status).toBe(403)

    const refused = await consoleCall(app.current, "POST", route, { cookie: kim.cookie, body: { url: "https://192.168.1.5/x" } })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toMatchObject({ code: "invalid_webhook_url", field: "url" })
    const created = await consoleCall(app.current, "POST", route, { cookie: kim.cookie, body: { url: "https://hooks.example.com/x" } })
    expect(created.status).toBe(201)
    expect(created.body.secret).toMatch(/^whsec_/)
    const listed = await consoleCall(app.current, "GET", route, { cookie: kim.cookie })
    expect(listed.body.data.map((w: { id: string }) => w.id)).toEqual([created.body.id])
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret)
    const deliveries = `${route}/${created.body.id}/deliveries`
    expect((await consoleCall(app.current, "GET", deliveries, { cookie: max.cookie })).status).toBe(403)
    expect((await consoleCall(app.current, "GET", deliveries, { cookie: kim.cookie })).body).toEqual({ data: [] })
    expect((await consoleCall(app.current, "DELETE", `${route}/${created.body.id}`, { cookie: max.cookie })).status).toBe(403)
    expect((await consoleCall(app.current, "DELETE", `${route}/${created.body.id}`, { cookie: kim.cookie })).status).toBe(200)
    // The admin API sees the console's change.
    expect((await admin(app.current, "GET", `/admin/workspaces/${id}/webhooks`)).body.data).toEqual([])
  })
})

describe("webhooks with WEBHOOKS_ALLOW_PRIVATE_ADDRESSES=true (in-memory app)", () => {
  const app = useApp({ WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: "true" })

  it("takes plain http and local targets, still not other schemes", async () => {
    const { id } = await createWorkspace(app.current, "Local hooks")
    const route = `/admin/workspaces/${id}/webhooks`
    expect((await admin(app.current, "POST", route, { url: "http://127.0.0.1:9/hooks" })).status).toBe(201)
    expect((await admin(app.current, "POST", route, { url: "https://10.0.0.8/hooks" })).status).toBe(201)
    const refused = await admin(app.current, "POST", route, { url: "ftp://127.0.0.1/hooks" })
    expect(refused.status).toBe(400)
    expect(refused.body.error.field).toBe("url")
  })
})
