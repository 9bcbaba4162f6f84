import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { call, createKey, createWorkspace, testAdminToken, useApp } from "../support/app"
import { eventually } from "../support/fakeUpstream"

const exportBody = { from: { date: "2026-01-01T00:00:00", timezone: "UTC" }, to: { date: "2026-01-31T00:00:00", timezone: "UTC" } }

describe("API keys", () => {
  const app = useApp({}, { stores: "postgres" })

  it("are shown once, listed without the key, and only a hash is stored", async () => {
    const workspace = await createWorkspace(app.current)
    const created = await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])
    expect(created.key).toMatch(/^wsk_[A-Za-z0-9_-]{43}$/)

    const listed = await call(app.current, "GET", `/admin/workspaces/${workspace.id}/api-keys`, { token: testAdminToken })
    expect(listed.status).toBe(200)
    expect(listed.body.data).toHaveLength(1)
    expect(JSON.stringify(listed.body)).not.toContain(created.key)
    expect(listed.body.data[0]).toMatchObject({ id: created.id, scopes: ["USAGE_EXPORT_API"], revokedAt: null })

    // No column of any table holds the plaintext key, nor its secret part.
    const dump = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tables = yield* sql<{ name: string }>`
          SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name
          FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'`
        const texts = yield* Effect.forEach(tables, ({ name }) =>
          sql.unsafe<{ dump: string | null }>(`SELECT string_agg(row_to_json(t)::text, ' ') AS dump FROM ${name} t`))
        return { tables: tables.map(({ name }) => name), text: texts.map((rows) => rows[0]?.dump ?? "").join(" ") }
      }).pipe(
        Effect.provide(PgClient.layer({ url: Redacted.make(app.current.env.DATABASE_URL!) })),
        Effect.scoped
      )
    )
    expect(dump.tables.length).toBeGreaterThan(5)
    expect(dump.text).toContain(created.id)
    expect(dump.text).not.toContain(created.key.slice(4))
  })

  it("get past auth with the right scope and 401 without it, per endpoint family", async () => {
    const workspace = await createWorkspace(app.current)
    const exporter = await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])
    const completer = await createKey(app.current, workspace.id, ["COMPLETION_API"])

    const withoutScope = await call(app.current, "POST", "/export/users", { token: completer.key, body: exportBody })
    expect(withoutScope.status).toBe(401)
    expect(withoutScope.body).toEqual({
      success: false,
      error: { code: "insufficient_scope", message: expect.stringContaining("USAGE_EXPORT_API") }
    })
    const withScope = await call(app.current, "POST", "/export/users", { token: exporter.key, body: exportBody })
    expect(withScope.status).not.toBe(401)

    const chatWithoutScope = await call(app.current, "POST", "/provider_a/eu/v1/chat/completions", {
      token: exporter.key,
      body: { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] }
    })
    expect(chatWithoutScope.status).toBe(401)
    expect(chatWithoutScope.body.error).toMatchObject({ type: "authentication_error", code: "insufficient_scope" })
    const chatWithScope = await call(app.current, "POST", "/provider_a/eu/v1/chat/completions", {
      token: completer.key,
      body: { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] }
    })
    expect(chatWithScope.status).not.toBe(401)
  })

  it("answer 401 in each endpoint's own format for missing, malformed and unknown keys", async () => {
    const unknown = `wsk_${"A".repeat(43)}`
    const cases = [
      { route: "/export/users", check: (b: any) => expect(b).toMatchObject({ success: false, error: { code: "invalid_api_key" } }) },
      {
        route: "/provider_a/eu/v1/chat/completions",
        check: (b: any) => expect(b).toEqual({ error: { message: expect.any(String), type: "authentication_error", param: null, code: "invalid_api_key" } })
      },
      {
        route: "/provider_a/us/v1/embeddings",
        check: (b: any) => expect(b.error.type).toBe("authentication_error")
      },
      {
        route: "/provider_b/eu/v1/messages",
        check: (b: any) => expect(b).toEqual({ type: "error", error: { type: "authentication_error", message: expect.any(String) } })
      },
      {
        route: "/provider_c/eu/v1/fim/completions",
        check: (b: any) => expect(b).toEqual({ object: "error", message: expect.any(String), type: "authentication_error", param: null, code: "invalid_api_key" })
      }
    ]
    for (const { check, route } of cases) {
      const attempts: ReadonlyArray<Record<string, string>> = [{}, { authorization: "Bearer not-a-key" }, { authorization: `Bearer ${unknown}` }, { authorization: `Basic ${unknown}` }]
      for (const headers of attempts) {
        const response = await call(app.current, "POST", route, { headers, body: {} })
        expect(response.status, `${route} ${JSON.stringify(headers)}`).toBe(401)
        check(response.body)
      }
    }
  })

  it("answer 401 in each endpoint's own format for revoked and under-scoped keys", async () => {
    const workspace = await createWorkspace(app.current)
    const exporter = await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])
    const completer = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    const revoked = await createKey(app.current, workspace.id, ["USAGE_EXPORT_API", "COMPLETION_API"])
    expect((await call(app.current, "DELETE", `/admin/workspaces/${workspace.id}/api-keys/${revoked.id}`, { token: testAdminToken })).status).toBe(200)
    const formats = [
      { route: "/export/users", underScoped: completer.key, shape: (code: string) => ({ success: false, error: { code, message: expect.any(String) } }) },
      {
        route: "/provider_a/eu/v1/chat/completions",
        underScoped: exporter.key,
        shape: (code: string) => ({ error: { message: expect.any(String), type: "authentication_error", param: null, code } })
      },
      {
        route: "/provider_b/eu/v1/messages",
        underScoped: exporter.key,
        shape: () => ({ type: "error", error: { type: "authentication_error", message: expect.any(String) } })
      },
      {
        route: "/provider_c/eu/v1/fim/completions",
        underScoped: exporter.key,
        shape: (code: string) => ({ object: "error", message: expect.any(String), type: "authentication_error", param: null, code })
      }
    ]
    for (const { route, shape, underScoped } of formats) {
      const refusedRevoked = await call(app.current, "POST", route, { token: revoked.key, body: {} })
      expect(refusedRevoked.status, `${route} revoked`).toBe(401)
      expect(refusedRevoked.body, `${route} revoked`).toEqual(shape("invalid_api_key"))
      const refusedScope = await call(app.current, "POST", route, { token: underScoped, body: {} })
      expect(refusedScope.status, `${route} scope`).toBe(401)
      expect(refusedScope.body, `${route} scope`).toEqual(shape("insufficient_scope"))
      expect(JSON.stringify(refusedScope.body)).toContain(route === "/export/users" ? "USAGE_EXPORT_API" : "COMPLETION_API")
    }
  })

  it("are accepted in x-api-key on provider_b, and two different keys are refused", async () => {
    const workspace = await createWorkspace(app.current)
    const key = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    const other = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    const body = { model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }
    const viaHeader = await call(app.current, "POST", "/provider_b/eu/v1/messages", { headers: { "x-api-key": key.key }, body })
    expect(viaHeader.status).not.toBe(401)
    const both = await call(app.current, "POST", "/provider_b/eu/v1/messages", {
      token: key.key,
      headers: { "x-api-key": other.key },
      body
    })
    expect(both.status).toBe(401)
    // Elsewhere x-api-key is not a credential.
    const elsewhere = await call(app.current, "POST", "/provider_a/eu/v1/embeddings", {
      headers: { "x-api-key": key.key },
      body: { model: "text-embedding-ada-002", input: "hi" }
    })
    expect(elsewhere.status).toBe(401)
  })

  it("stop working within a second of revocation", async () => {
    const workspace = await createWorkspace(app.current)
    const key = await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])
    const before = await call(app.current, "POST", "/export/users", { token: key.key, body: exportBody })
    expect(before.status).not.toBe(401)
    const revoked = await call(app.current, "DELETE", `/admin/workspaces/${workspace.id}/api-keys/${key.id}`, { token: testAdminToken })
    expect(revoked.status).toBe(200)
    expect(revoked.body.revokedAt).not.toBeNull()
    // The instance's key cache forgets the key within a second: polled, not slept.
    const after = await eventually(() => call(app.current, "POST", "/export/users", { token: key.key, body: exportBody }), (answer) => answer.status === 401, 5_000)
    expect(after.body.error.message).toBe("Invalid API key provided.")
  })

  it("record the last use without a write per request", async () => {
    const workspace = await createWorkspace(app.current)
    const key = await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])
    await call(app.current, "POST", "/export/users", { token: key.key, body: exportBody })
    const listed = async () =>
      (await call(app.current, "GET", `/admin/workspaces/${workspace.id}/api-keys`, { token: testAdminToken })).body.data[0]
        .lastUsedAt
    expect(await listed()).toBeNull()
    // Written in a batch every few seconds: polled until it appears.
    expect(Date.parse(await eventually(listed, (lastUsedAt) => lastUsedAt !== null, 15_000))).toBeGreaterThan(Date.now() - 20_000)
  })

  it("of one workspace can neither be listed nor revoked through another", async () => {
    const a = await createWorkspace(app.current, "A")
    const b = await createWorkspace(app.current, "B")
    const keyOfA = await createKey(app.current, a.id, ["COMPLETION_API"])
    const revokeViaB = await call(app.current, "DELETE", `/admin/workspaces/${b.id}/api-keys/${keyOfA.id}`, { token: testAdminToken })
    expect(revokeViaB.status).toBe(404)
    const listB = await call(app.current, "GET", `/admin/workspaces/${b.id}/api-keys`, { token: testAdminToken })
    expect(listB.body.data).toEqual([])
    const listA = await call(app.current, "GET", `/admin/workspaces/${a.id}/api-keys`, { token: testAdminToken })
    expect(listA.body.data[0].revokedAt).toBeNull()
  })
})

describe("admin API", () => {
  const app = useApp({}, { stores: "postgres" })

  it("requires the admin token", async () => {
    for (const token of [undefined, "wrong-token-wrong-token", `wsk_${"A".repeat(43)}`]) {
      const response = await call(app.current, "POST", "/admin/workspaces", { ...(token ? { token } : {}), body: { name: "x" } })
      expect(response.status).toBe(401)
      expect(response.body).toEqual({ error: { code: "unauthorized", message: expect.any(String) } })
    }
  })

  it("creates, reads and patches workspace settings", async () => {
    const created = await createWorkspace(app.current, "Acme", { workflowsEnabled: false })
    expect(created.settings).toMatchObject({ workflowsEnabled: false, anonymizeUsers: false, leaderboardsEnabled: true })
    const patched = await call(app.current, "PATCH", `/admin/workspaces/${created.id}`, {
      token: testAdminToken,
      body: { settings: { anonymizeUsers: true, byokModels: { provider_a: ["my-model"] } } }
    })
    expect(patched.status).toBe(200)
    expect(patched.body.settings).toMatchObject({ anonymizeUsers: true, workflowsEnabled: false, byokModels: { provider_a: ["my-model"] } })
    const read = await call(app.current, "GET", `/admin/workspaces/${created.id}`, { token: testAdminToken })
    expect(read.body).toEqual(patched.body)
  })

  it("rejects bad input naming the field and changes nothing", async () => {
    const created = await createWorkspace(app.current)
    const bad = await call(app.current, "PATCH", `/admin/workspaces/${created.id}`, {
      token: testAdminToken,
      body: { settings: { anonymizeUsers: "yes" } }
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error.field).toBe("settings.anonymizeUsers")
    const read = await call(app.current, "GET", `/admin/workspaces/${created.id}`, { token: testAdminToken })
    expect(read.body.settings.anonymizeUsers).toBe(false)

    const badScope = await call(app.current, "POST", `/admin/workspaces/${created.id}/api-keys`, {
      token: testAdminToken,
      body: { name: "k", scopes: ["ADMIN"] }
    })
    expect(badScope.status).toBe(400)
    expect(badScope.body.error.field).toMatch(/^scopes/)
    const noScopes = await call(app.current, "POST", `/admin/workspaces/${created.id}/api-keys`, {
      token: testAdminToken,
      body: { name: "k", scopes: [] }
    })
    expect(noScopes.status).toBe(400)
    const keys = await call(app.current, "GET", `/admin/workspaces/${created.id}/api-keys`, { token: testAdminToken })
    expect(keys.body.data).toEqual([])

    const malformed = await call(app.current, "POST", "/admin/workspaces", { token: testAdminToken, body: "{\"name\":" })
    expect(malformed.status).toBe(400)
    expect(malformed.body.error.code).toBe("invalid_json")
  })

  it("answers 404 for unknown workspaces and keys", async () => {
    for (const id of ["00000000-0000-0000-0000-000000000000", "not-a-uuid"]) {
      const response = await call(app.current, "GET", `/admin/workspaces/${id}`, { token: testAdminToken })
      expect(response.status).toBe(404)
      expect(response.body.error.code).toBe("workspace_not_found")
    }
    const workspace = await createWorkspace(app.current)
    const response = await call(app.current, "DELETE", `/admin/workspaces/${workspace.id}/api-keys/00000000-0000-0000-0000-000000000000`, {
      token: testAdminToken
    })
    expect(response.status).toBe(404)
  })
})
