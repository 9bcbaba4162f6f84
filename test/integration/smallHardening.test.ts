import * as http from "node:http"
import { beforeAll, describe, expect, it } from "vitest"
import { call, createKey, createWorkspace, testAdminToken, useApp } from "../support/app"

/** The smaller findings of issue 13 (defect 12), each answered as a client can act on it. */
describe("smaller hardening", () => {
  const app = useApp({ MAX_BODY_BYTES: String(256 * 1024) })
  let workspaceId: string
  let exportKey: string

  beforeAll(async () => {
    workspaceId = (await createWorkspace(app.current)).id
    exportKey = (await createKey(app.current, workspaceId, ["USAGE_EXPORT_API", "COMPLETION_API"])).key
  })

  const deep = `{"name":${"[".repeat(100_000)}${"]".repeat(100_000)}}`

  it.each([
    ["POST", "/admin/workspaces", "admin"],
    ["PATCH", "/admin/workspaces/{id}", "admin"],
    ["POST", "/admin/workspaces/{id}/api-keys", "admin"],
    ["POST", "/admin/workspaces/{id}/events", "admin"],
    ["POST", "/export/users", "export"],
    ["POST", "/provider_a/eu/v1/chat/completions", "export"]
  ])("answers JSON nested 100,000 deep with 400 on %s %s", async (method, route, auth) => {
    const answer = await call(app.current, method, route.replace("{id}", workspaceId), {
      token: auth === "admin" ? testAdminToken : exportKey,
      body: deep
    })
    expect(answer.status).toBe(400)
  })

  it("answers an admin create with an empty body with 400", async () => {
    const answer = await call(app.current, "POST", "/admin/workspaces", {
      token: testAdminToken,
      headers: { "content-type": "application/json" }
    })
    expect(answer.status).toBe(400)
  })

  it("answers a NUL character in a name with 400 naming the field, not 503", async () => {
    const created = await call(app.current, "POST", "/admin/workspaces", { token: testAdminToken, body: { name: "a\u0000b" } })
    expect(created.status).toBe(400)
    expect(created.body.error.field).toBe("name")
    const events = await call(app.current, "POST", `/admin/workspaces/${workspaceId}/events`, {
      token: testAdminToken,
      body: {
        events: [{
          id: "e-nul-1",
          type: "message",
          occurredAt: "2026-01-01T00:00:00Z",
          user: { id: "u1", email: "u1@example.com", name: "x\u0000y" },
          model: "chatgen-4o",
          inputTokens: 1,
          outputTokens: 1
        }]
      }
    })
    expect(events.status).toBe(400)
    expect(JSON.stringify(events.body)).toContain("name")
  })

  /** A chunked body (no content-length) larger than MAX_BODY_BYTES: the status, or "reset". */
  const sendChunked = (route: string, token: string) =>
    new Promise<number | "reset">((resolve) => {
      const url = new URL(`${app.current.url}${route}`)
      const request = http.request(url, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "transfer-encoding": "chunked" }
      }, (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
      })
      request.on("error", () => resolve("reset"))
      const piece = `{"name":"${"x".repeat(64 * 1024)}`
      let sent = 0
      const pump = () => {
        while (sent < 40) {
          sent += 1
          if (!request.write(piece)) return void request.once("drain", pump)
        }
        request.end('"}')
      }
      pump()
    })

  it("answers oversized chunked admin and export bodies with 413, not a reset", async () => {
    expect(await sendChunked("/admin/workspaces", testAdminToken)).toBe(413)
    expect(await sendChunked("/export/users", exportKey)).toBe(413)
  })

  it("sends security headers, and no-store on answers that carry secrets", async () => {
    const health = await call(app.current, "GET", "/healthz")
    expect(health.headers.get("x-content-type-options")).toBe("nosniff")
    expect(health.headers.get("x-frame-options")).toBe("DENY")
    const key = await call(app.current, "POST", `/admin/workspaces/${workspaceId}/api-keys`, {
      token: testAdminToken,
      body: { name: "k", scopes: ["COMPLETION_API"] }
    })
    expect(key.status).toBe(201)
    expect(key.headers.get("cache-control")).toContain("no-store")
    expect(key.headers.get("x-content-type-options")).toBe("nosniff")
    const forwarded = await call(app.current, "POST", "/provider_a/eu/v1/chat/completions", {
      token: exportKey,
      body: { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] }
    })
    expect(forwarded.headers.get("x-content-type-options")).toBe("nosniff")
  })

  it("does not echo a duplicated signature parameter", async () => {
    const answer = await call(app.current, "GET", `/downloads/users-usage/${workspaceId}/users_2026-01-01_2026-01-02.csv?expires=1&signature=secret-one&signature=secret-two`)
    // Refused as a link that is not valid (or a path that is not one), never a decode error quoting it.
    expect([403, 404]).toContain(answer.status)
    expect(JSON.stringify(answer.body)).not.toContain("secret-one")
    expect(JSON.stringify(answer.body)).not.toContain("secret-two")
  })
})
