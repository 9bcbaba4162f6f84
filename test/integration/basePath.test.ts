import { describe, expect, it } from "vitest"
import { call, createKey, createWorkspace, testAdminToken, useApp } from "../support/app"

describe("BASE_PATH=/api/public", () => {
  const app = useApp({ BASE_PATH: "/api/public" })

  const routes: ReadonlyArray<readonly [method: string, path: string]> = [
    ["GET", "/healthz"],
    ["GET", "/readyz"],
    ["GET", "/openapi.json"],
    ["GET", "/docs"],
    ["POST", "/admin/workspaces"],
    ["POST", "/export/users"],
    ["POST", "/export/assistants"],
    ["POST", "/export/workflows"],
    ["POST", "/export/projects"],
    ["POST", "/export/models"],
    ["POST", "/provider_a/eu/v1/chat/completions"],
    ["POST", "/provider_a/eu/v1/embeddings"],
    ["POST", "/provider_b/eu/v1/messages"],
    ["POST", "/provider_c/eu/v1/fim/completions"],
    ["POST", "/provider_b/eu/v1/messages/count_tokens"],
    ["GET", "/provider_a/eu/v1/models"],
    ["GET", "/provider_b/eu/v1/models/assistantmodel-sonnet-4-5-20250929"],
    ["GET", "/provider_c/eu/v1/models"]
  ]

  it("serves every route under the prefix and none outside it", async () => {
    for (const [method, path] of routes) {
      const inside = await fetch(`${app.current.origin}/api/public${path}`, { method })
      expect(inside.status, `${method} /api/public${path}`).not.toBe(404)
      const outside = await fetch(`${app.current.origin}${path}`, { method })
      expect(outside.status, `${method} ${path}`).toBe(404)
    }
  })

  it("runs the whole key flow under the prefix", async () => {
    const workspace = await createWorkspace(app.current)
    const key = await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])
    const read = await call(app.current, "GET", `/admin/workspaces/${workspace.id}`, { token: testAdminToken })
    expect(read.body.id).toBe(workspace.id)
    const exported = await call(app.current, "POST", "/export/users", {
      token: key.key,
      body: { from: { date: "2026-01-01T00:00:00", timezone: "UTC" }, to: { date: "2026-01-02T00:00:00", timezone: "UTC" } }
    })
    expect(exported.status).not.toBe(401)
  })

  it("documents the prefix in the OpenAPI document", async () => {
    const spec = await call(app.current, "GET", "/openapi.json")
    expect(spec.body.servers).toEqual([{ url: "/api/public" }])
    expect(Object.keys(spec.body.paths)).toContain("/provider_a/{region}/v1/chat/completions")
  })
})
