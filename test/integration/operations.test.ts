import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { query } from "../support/database"
import { call, testAdminToken, useApp } from "../support/app"

describe("operations", () => {
  const app = useApp({ MAX_BODY_BYTES: "2000" }, { stores: "postgres" })

  it("echoes a request id, keeping a sane one from the caller", async () => {
    const generated = await call(app.current, "GET", "/healthz")
    expect(generated.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/)
    expect(generated.headers.get("request-id")).toBe(generated.headers.get("x-request-id"))
    const kept = await call(app.current, "GET", "/healthz", { headers: { "x-request-id": "trace-1234abcd" } })
    expect(kept.headers.get("x-request-id")).toBe("trace-1234abcd")
    const unsafe = await call(app.current, "GET", "/healthz", { headers: { "x-request-id": "bad id\twith spaces" } })
    expect(unsafe.headers.get("x-request-id")).toMatch(/^req_/)
  })

  it("refuses bodies over the limit with 413 in the endpoint's format", async () => {
    const big = JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "x".repeat(5000) }] })
    const chat = await call(app.current, "POST", "/provider_a/eu/v1/chat/completions", { body: big, token: `wsk_${"A".repeat(43)}` })
    expect(chat.status).toBe(413)
    expect(chat.body.error).toMatchObject({ code: "request_too_large" })
    const messages = await call(app.current, "POST", "/provider_b/eu/v1/messages", { body: big })
    expect(messages.status).toBe(413)
    expect(messages.body).toMatchObject({ type: "error", error: { type: "request_too_large" } })
  })

  it("answers readiness once migrated, and 503 while the database is behind the code's migrations", async () => {
    const ready = await call(app.current, "GET", "/readyz")
    expect(ready.status).toBe(200)
    expect(ready.body.status).toBe("ready")

    // As if an older instance's database were in use: the newest migration is not recorded.
    const url = app.current.env.DATABASE_URL!
    const [newest] = await query<{ migration_id: number; name: string }>(url, "SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id DESC LIMIT 1")
    await query(url, "DELETE FROM effect_sql_migrations WHERE migration_id = $1", [newest!.migration_id])
    try {
      const behind = await call(app.current, "GET", "/readyz")
      expect(behind.status).toBe(503)
      expect(behind.body).toEqual({ status: "unavailable", reason: `database at migration ${newest!.migration_id - 1}, expected ${newest!.migration_id}` })
      expect((await call(app.current, "GET", "/healthz")).status).toBe(200)
    } finally {
      await query(url, "INSERT INTO effect_sql_migrations (migration_id, name) VALUES ($1, $2)", [newest!.migration_id, newest!.name])
    }
    expect((await call(app.current, "GET", "/readyz")).status).toBe(200)
  })

  it("keeps no secrets file under DATA_DIR when DATABASE_URL and ADMIN_TOKEN are both given", () => {
    expect(fs.existsSync(path.join(app.current.env.DATA_DIR!, "secrets.json"))).toBe(false)
  })

  it("refuses a body declared as anything but JSON with 415 in the family's format, before any parser runs", async () => {
    const multipart = { "content-type": "multipart/form-data; boundary=x" }
    const admin = await call(app.current, "POST", "/admin/workspaces", { token: testAdminToken, headers: multipart, body: "{}" })
    expect(admin.status).toBe(415)
    expect(admin.body).toEqual({ error: { code: "unsupported_media_type", message: expect.stringContaining("application/json") } })
    const chat = await call(app.current, "POST", "/provider_a/eu/v1/chat/completions", { headers: { ...multipart, authorization: "Bearer x" }, body: "{}" })
    expect(chat.status).toBe(415)
    expect(chat.body.error).toMatchObject({ type: "invalid_request_error", code: "unsupported_media_type" })
    const form = await call(app.current, "POST", "/provider_b/eu/v1/messages", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "a=b" })
    expect(form.status).toBe(415)
    expect(form.body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } })
    // JSON with parameters, or no declared type at all, is read as JSON.
    const charset = await call(app.current, "POST", "/admin/workspaces", { token: testAdminToken, headers: { "content-type": "application/json; charset=utf-8" }, body: '{"name":"x"}' })
    expect(charset.status).toBe(201)
  })

  it("answers unknown routes with 404 in the family's format", async () => {
    const chat = await call(app.current, "POST", "/provider_a/eu/v1/completions", { body: {} })
    expect(chat.status).toBe(404)
    expect(chat.body.error.type).toBe("not_found_error")
    const messages = await call(app.current, "POST", "/provider_b/eu/v2/messages", { body: {} })
    expect(messages.status).toBe(404)
    expect(messages.body.error.type).toBe("not_found_error")
  })
})
