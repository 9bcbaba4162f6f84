import { HttpApi } from "@effect/platform"
import { Option, SchemaAST } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { WorkspaceApi } from "../../src/api/Api"
import { consoleCall, invitePerson, operatorCookie, password, tokenOf } from "../support/console"
import { useApp, call, createKey, createWorkspace, testAdminToken } from "../support/app"
import { message } from "../support/usage"

/** The groups whose bodies are the service's own (the admin API, the console's): an unknown field is a mistake of the caller, refused. */
const isStrictGroup = (identifier: string): boolean => identifier === "admin" || identifier.startsWith("console")

/** Every endpoint of those groups that takes a body, as `group.endpoint`, read from the API itself. */
const bodyEndpoints = (): Map<string, SchemaAST.AST> => {
  const found = new Map<string, SchemaAST.AST>()
  HttpApi.reflect(WorkspaceApi, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint }) => {
      if (!isStrictGroup(group.identifier) || !["POST", "PATCH", "PUT"].includes(endpoint.method)) return
      const payload = (endpoint as { readonly payloadSchema: Option.Option<{ readonly ast: SchemaAST.AST }> }).payloadSchema
      if (Option.isSome(payload)) found.set(`${group.identifier}.${endpoint.name}`, payload.value.ast)
    }
  })
  return found
}

interface Row {
  /** `group.endpoint` of the API. */
  readonly endpoint: string
  readonly method: "POST" | "PATCH" | "PUT"
  readonly path: () => string
  readonly body: () => Record<string, unknown>
  /** The unknown keys the body carries, as the answer must name them (wire paths). */
  readonly unknown: ReadonlyArray<string>
  /** A console call (with this cookie) rather than the operator's bearer token. */
  readonly cookie?: () => string
  /** The error code when not the decoder's `invalid_value` (the event batch has its own). */
  readonly code?: string
  /** What is read before and after: the refused request changed nothing there (an admin GET, or the ledger). */
  readonly unchanged: () => string | (() => unknown)
}

describe("admin and console bodies refuse unknown fields with a 400 naming them", () => {
  const app = useApp()
  let workspaceId = ""
  let memberId = ""
  let person = ""
  let invitationToken = ""
  let operator = ""
  let keyId = ""

  beforeAll(async () => {
    workspaceId = (await createWorkspace(app.current, "Strict bodies")).id
    keyId = (await createKey(app.current, workspaceId, ["COMPLETION_API"])).id
    const invited = await invitePerson(app.current, workspaceId, "strict@example.com", "admin")
    memberId = invited.memberId
    person = invited.cookie
    const pending = await call(app.current, "POST", `/admin/workspaces/${workspaceId}/members`, {
      token: testAdminToken,
      body: { email: "pending@example.com", role: "member" }
    })
    invitationToken = tokenOf(pending.body.invitationUrl)
    operator = await operatorCookie(app.current)
  })

  const ws = (rest: string) => () => `/admin/workspaces/${workspaceId}${rest}`
  const cws = (rest: string) => () => `/console/api/workspaces/${workspaceId}${rest}`
  const range = { from: { date: "2026-01-01", timezone: "UTC" }, to: { date: "2026-01-02", timezone: "UTC" } }
  const asOperator = () => operator

  const rows: ReadonlyArray<Row> = [
    { endpoint: "admin.createWorkspace", method: "POST", path: () => "/admin/workspaces", body: () => ({ name: "Never made", plan: "pro" }), unknown: ["plan"], unchanged: () => "/admin/workspaces?search=never%20made" },
    { endpoint: "admin.updateWorkspace", method: "PATCH", path: ws(""), body: () => ({ name: "Renamed", colour: "red" }), unknown: ["colour"], unchanged: ws("") },
    { endpoint: "admin.createApiKey", method: "POST", path: ws("/api-keys"), body: () => ({ name: "k", scopes: ["COMPLETION_API"], expiresAt: "2030-01-01T00:00:00Z", budgetUsd: 5 }), unknown: ["budgetUsd"], unchanged: ws("/api-keys") },
    { endpoint: "admin.updateApiKey", method: "PATCH", path: () => `/admin/workspaces/${workspaceId}/api-keys/${keyId}`, body: () => ({ expiresAt: "2030-01-01T00:00:00Z", name: "renamed" }), unknown: ["name"], unchanged: ws("/api-keys") },
    { endpoint: "admin.createWebhook", method: "POST", path: ws("/webhooks"), body: () => ({ url: "https://hooks.example.com/budgets", retries: 3 }), unknown: ["retries"], unchanged: ws("/webhooks") },
    { endpoint: "admin.ingestEvents", method: "POST", path: ws("/events"), body: () => ({ events: [message("strict-1", "2026-01-05T10:00:00Z")], dryRun: true }), unknown: ["dryRun"], code: "invalid_event", unchanged: () => () => app.current.usage.workspaces.get(workspaceId)?.messages.size ?? 0 },
    { endpoint: "admin.inviteMember", method: "POST", path: ws("/members"), body: () => ({ email: "new@example.com", role: "member", sendEmail: true }), unknown: ["sendEmail"], unchanged: ws("/members") },
    { endpoint: "admin.changeMember", method: "PATCH", path: () => `/admin/workspaces/${workspaceId}/members/${memberId}`, body: () => ({ role: "member", notify: true }), unknown: ["notify"], unchanged: ws("/members") },
    { endpoint: "admin.setProviderKey", method: "PUT", path: ws("/provider-keys/provider_a"), body: () => ({ apiKey: "sk-simulated-key-0123456789", label: "main" }), unknown: ["label"], unchanged: ws("/provider-keys") },
    { endpoint: "admin.runExport", method: "POST", path: ws("/exports/users"), body: () => ({ from: { ...range.from, offset: "+01:00" }, to: range.to }), unknown: ["from.offset"], unchanged: ws("/audit") },
    { endpoint: "consoleSession.signIn", method: "POST", path: () => "/console/api/session", body: () => ({ email: "strict@example.com", password, remember: true }), unknown: ["remember"], cookie: () => "", unchanged: ws("/audit") },
    { endpoint: "admin.passwordReset", method: "POST", path: () => "/admin/people/password-reset", body: () => ({ email: "strict@example.com", validForHours: 48 }), unknown: ["validForHours"], unchanged: ws("/audit") },
    { endpoint: "consoleAccount.acceptInvitation", method: "POST", path: () => `/console/api/invitations/${invitationToken}`, body: () => ({ password, name: "Pat", avatar: "x.png" }), unknown: ["avatar"], cookie: () => "", unchanged: ws("/members") },
    { endpoint: "consoleAccount.changePassword", method: "PUT", path: () => "/console/api/session/password", body: () => ({ currentPassword: password, newPassword: "another long passphrase", confirm: "another long passphrase" }), unknown: ["confirm"], cookie: () => person, unchanged: ws("/audit") },
    { endpoint: "consoleAccount.resetPassword", method: "POST", path: () => "/console/api/password-resets/no-such-link", body: () => ({ password: "another long passphrase", email: "strict@example.com" }), unknown: ["email"], cookie: () => "", unchanged: ws("/audit") },
    { endpoint: "console.createWorkspace", method: "POST", path: () => "/console/api/workspaces", body: () => ({ name: "Never made", plan: "pro" }), unknown: ["plan"], cookie: asOperator, unchanged: () => "/admin/workspaces?search=never%20made" },
    { endpoint: "console.createApiKey", method: "POST", path: cws("/api-keys"), body: () => ({ name: "k", scopes: ["COMPLETION_API"], expiresAt: "2030-01-01T00:00:00Z", budgetUsd: 5 }), unknown: ["budgetUsd"], cookie: asOperator, unchanged: ws("/api-keys") },
    { endpoint: "console.updateApiKey", method: "PATCH", path: () => `/console/api/workspaces/${workspaceId}/api-keys/${keyId}`, body: () => ({ expiresAt: "2030-01-01T00:00:00Z", name: "renamed" }), unknown: ["name"], cookie: asOperator, unchanged: ws("/api-keys") },
    { endpoint: "console.createWebhook", method: "POST", path: cws("/webhooks"), body: () => ({ url: "https://hooks.example.com/budgets", retries: 3 }), unknown: ["retries"], cookie: asOperator, unchanged: ws("/webhooks") },
    { endpoint: "console.runExport", method: "POST", path: cws("/exports/users"), body: () => ({ ...range, format: "csv" }), unknown: ["format"], cookie: asOperator, unchanged: ws("/audit") },
    { endpoint: "console.inviteMember", method: "POST", path: cws("/members"), body: () => ({ email: "new@example.com", role: "member", sendEmail: true }), unknown: ["sendEmail"], cookie: asOperator, unchanged: ws("/members") },
    { endpoint: "console.changeMember", method: "PATCH", path: () => `/console/api/workspaces/${workspaceId}/members/${memberId}`, body: () => ({ role: "member", notify: true }), unknown: ["notify"], cookie: asOperator, unchanged: ws("/members") },
    { endpoint: "console.setProviderKey", method: "PUT", path: cws("/provider-keys/provider_a"), body: () => ({ apiKey: "sk-simulated-key-0123456789", label: "main" }), unknown: ["label"], cookie: asOperator, unchanged: ws("/provider-keys") },
    { endpoint: "console.updateSettings", method: "PATCH", path: cws("/settings"), body: () => ({ timezone: "Europe/Berlin", rateLimits: { families: {}, burst: 2 } }), unknown: ["rateLimits.burst"], cookie: asOperator, unchanged: ws("") }
  ]

  it("the table covers every admin and console endpoint that takes a body, and each payload is decoded strictly", () => {
    const endpoints = bodyEndpoints()
    expect(rows.map((row) => row.endpoint).sort()).toEqual([...endpoints.keys()].sort())
    for (const [name, ast] of endpoints) {
      const options = SchemaAST.getParseOptionsAnnotation(ast)
      expect([name, Option.map(options, (o) => o.onExcessProperty)]).toEqual([name, Option.some("error")])
    }
  })

  for (const row of rows) {
    it(`${row.endpoint}: ${row.method} with ${row.unknown.join(", ")}`, async () => {
      const probe = row.unchanged()
      const read = async () => typeof probe === "string" ? (await call(app.current, "GET", probe, { token: testAdminToken })).body : probe()
      const before = await read()
      const answer = row.cookie === undefined
        ? await call(app.current, row.method, row.path(), { token: testAdminToken, body: row.body() })
        : await consoleCall(app.current, row.method, row.path(), { cookie: row.cookie(), body: row.body() })
      expect(answer.status, JSON.stringify(answer.body)).toBe(400)
      expect(answer.body).toEqual({
        error: {
          code: row.code ?? "invalid_value",
          field: row.unknown[0],
          message: expect.stringContaining(`Unknown parameter${row.unknown.length > 1 ? "s" : ""}: ${row.unknown.map((name) => `'${name}'`).join(", ")}`)
        }
      })
      expect(await read()).toEqual(before)
    })
  }

  it("the same bodies without the unknown fields are accepted (the refusal is the unknown field's)", async () => {
    const created = await call(app.current, "POST", `/admin/workspaces/${workspaceId}/api-keys`, {
      token: testAdminToken,
      body: { name: "k", scopes: ["COMPLETION_API"] }
    })
    expect(created.status).toBe(201)
    const signedIn = await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "strict@example.com", password } })
    expect(signedIn.status).toBe(200)
    const settings = await consoleCall(app.current, "PATCH", `/console/api/workspaces/${workspaceId}/settings`, {
      cookie: operator,
      body: { timezone: "Europe/Berlin" }
    })
    expect(settings.status).toBe(200)
  })

  it("a union body (sign-in) names the key of the form the caller meant", async () => {
    const answer = await consoleCall(app.current, "POST", "/console/api/session", { body: { adminToken: testAdminToken, remember: true } })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toEqual({ code: "invalid_value", field: "remember", message: "Unknown parameter: 'remember' (expected one of adminToken)." })
  })
})
