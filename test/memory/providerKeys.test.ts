import ProviderBClient from "@anthropic-ai/sdk"
import { Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import { createHash } from "node:crypto"
import ProviderAClient from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SimulatorAddress } from "../../src/simulator/server"
import { eventually } from "../support/fakeUpstream"
import { type MemoryApp, startApp, call, createKey, createWorkspace, testAdminToken } from "../support/app"
import { consoleCall, invitePerson } from "../support/console"
import { simulatorTestLayer } from "../simulator/harness"

const serviceKey = "service-upstream-key-0000"
const workspaceKeyA = "ws-a-provider-a-key-1111"
const workspaceKeyB = "ws-a-provider-b-key-2222"
const unknownKey = "ws-a-unknown-key-9999"
const credentialsKey = "c0".repeat(32)

/** A prompt only the given key may carry upstream: the simulator refuses any other with 401. */
const onlyWith = (key: string, text = "Say something kind.") =>
  [{ role: "user" as const, content: `${text} [simulator expect_key=${createHash("sha256").update(key).digest("hex").slice(0, 32)}]` }]

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

/** A simulator that knows the service's key and two workspace keys, as every upstream of an in-memory app. */
const startStrictUpstream = async () => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(
    simulatorTestLayer({ apiKey: Option.some(Redacted.make(serviceKey)), acceptedKeys: [Redacted.make(workspaceKeyA), Redacted.make(workspaceKeyB)] }),
    scope
  ))
  const { baseUrl } = Effect.runSync(Effect.provide(SimulatorAddress, context))
  return { baseUrl, stop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

describe("a workspace's own provider keys (in-memory app, strict simulator, official clients)", () => {
  let upstream: Awaited<ReturnType<typeof startStrictUpstream>>
  let app: MemoryApp
  beforeAll(async () => {
    upstream = await startStrictUpstream()
    app = await startApp({
      CREDENTIALS_KEY: credentialsKey,
      ...Object.fromEntries(["PROVIDER_A_EU", "PROVIDER_B_EU", "PROVIDER_C_EU"].flatMap((id) => [
        [`UPSTREAM_${id}_URL`, upstream.baseUrl],
        [`UPSTREAM_${id}_KEY`, serviceKey]
      ]))
    })
  })
  afterAll(async () => {
    await app?.stop()
    await upstream?.stop()
  })

  const admin = (method: string, route: string, body?: unknown) => call(app, method, route, { token: testAdminToken, ...(body === undefined ? {} : { body }) })

  it("checks a key with the provider before saving it, and shows only its last four characters", async () => {
    const { id } = await createWorkspace(app, "Own keys")
    const refused = await admin("PUT", `/admin/workspaces/${id}/provider-keys/provider_a`, { apiKey: unknownKey })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toMatchObject({ code: "provider_key_rejected", field: "apiKey" })
    expect(JSON.stringify(refused.body)).not.toContain(unknownKey)
    expect((await admin("GET", `/admin/workspaces/${id}/provider-keys`)).body.data).toEqual([])

    const saved = await admin("PUT", `/admin/workspaces/${id}/provider-keys/provider_a`, { apiKey: workspaceKeyA })
    expect(saved.status).toBe(200)
    expect(saved.body).toMatchObject({ provider: "provider_a", last4: "1111", createdBy: "operator", lastUsedAt: null, lastError: null })
    const listed = await admin("GET", `/admin/workspaces/${id}/provider-keys`)
    expect(listed.body.data.map((k: { provider: string }) => k.provider)).toEqual(["provider_a"])
    const audit = await admin("GET", `/admin/workspaces/${id}/audit`)
    expect(audit.body.data[0]).toMatchObject({ action: "provider_key.set", target: "provider_a (…1111)" })
    for (const answer of [saved, listed, audit]) expect(JSON.stringify(answer.body)).not.toContain(workspaceKeyA)
  })

  it("sends every request of the workspace with its own key, other workspaces' with the service's, and records which", async () => {
    const [own, other] = [await createWorkspace(app, "Brings its key"), await createWorkspace(app, "Uses the service's key")]
    expect((await admin("PUT", `/admin/workspaces/${own.id}/provider-keys/provider_a`, { apiKey: workspaceKeyA })).status).toBe(200)
    const client = async (workspaceId: string) =>
      new ProviderAClient({ apiKey: (await createKey(app, workspaceId, ["COMPLETION_API"])).key, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 })
    const [ownClient, otherClient] = [await client(own.id), await client(other.id)]

    const json = await ownClient.chat.completions.create({ model: "chatgen-4o-mini", messages: onlyWith(workspaceKeyA) })
    expect(json.choices[0]!.message.content!.length).toBeGreaterThan(0)
    let streamed = ""
    for await (const chunk of await ownClient.chat.completions.create({ model: "chatgen-4o-mini", messages: onlyWith(workspaceKeyA), stream: true })) {
      streamed += chunk.choices[0]?.delta.content ?? ""
    }
    expect(streamed.length).toBeGreaterThan(0)
    expect((await otherClient.chat.completions.create({ model: "chatgen-4o-mini", messages: onlyWith(serviceKey) })).choices).toHaveLength(1)
    // provider_b has no key of the workspace: its requests go with the service's.
    const messages = new ProviderBClient({ apiKey: (await createKey(app, own.id, ["COMPLETION_API"])).key, baseURL: `${app.url}/provider_b/eu`, maxRetries: 0 })
    expect((await messages.messages.create({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 20, messages: onlyWith(serviceKey) })).type).toBe("message")

    const rows = (workspaceId: string) => [...(app.usage.workspaces.get(workspaceId)?.requests.values() ?? [])]
    const ownRows = await eventually(() => rows(own.id), (r) => r.length >= 3)
    expect(ownRows.filter((r) => r.provider === "provider_a").map((r) => r.byok)).toEqual([true, true])
    expect(ownRows.filter((r) => r.provider === "provider_b").map((r) => r.byok)).toEqual([false])
    expect((await eventually(() => rows(other.id), (r) => r.length >= 1)).map((r) => r.byok)).toEqual([false])
  })

  it("answers a refusal of the workspace's key with a 4xx in the endpoint's format, never a 502, and keeps it as the key's last error", async () => {
    const { id } = await createWorkspace(app, "Key refused upstream")
    expect((await admin("PUT", `/admin/workspaces/${id}/provider-keys/provider_b`, { apiKey: workspaceKeyB })).status).toBe(200)
    const messages = new ProviderBClient({ apiKey: (await createKey(app, id, ["COMPLETION_API"])).key, baseURL: `${app.url}/provider_b/eu`, maxRetries: 0 })
    // The upstream takes only another key for this request: it refuses the workspace's.
    const error = await failureOf(messages.messages.create({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 20, messages: onlyWith(unknownKey) }))
    expect(error).toBeInstanceOf(ProviderBClient.PermissionDeniedError)
    const refused = error as InstanceType<typeof ProviderBClient.PermissionDeniedError>
    expect(refused.status).toBe(403)
    expect(refused.message).toContain("refused this workspace's own provider key")
    expect(JSON.stringify(refused.error)).not.toContain(workspaceKeyB)
    const listed = await eventually(() => admin("GET", `/admin/workspaces/${id}/provider-keys`), (r) => r.body.data[0]?.lastError !== null)
    expect(listed.body.data[0]).toMatchObject({ provider: "provider_b", lastError: "The provider refused the key (status 401)." })
  })

  it("in the console: admins set, see and remove keys; members see only whether one is set", async () => {
    const { id } = await createWorkspace(app, "Console keys")
    const admin = await invitePerson(app, id, "kim@example.com", "admin")
    const member = await invitePerson(app, id, "max@example.com", "member")
    const route = `/console/api/workspaces/${id}/provider-keys`
    const set = await consoleCall(app, "PUT", `${route}/provider_a`, { cookie: admin.cookie, body: { apiKey: workspaceKeyA } })
    expect(set.status).toBe(200)
    expect(set.body).toMatchObject({ provider: "provider_a", set: true, last4: "1111", createdBy: "kim@example.com" })
    const refused = await consoleCall(app, "PUT", `${route}/provider_b`, { cookie: admin.cookie, body: { apiKey: unknownKey } })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toMatchObject({ code: "provider_key_rejected", field: "apiKey" })
    expect((await consoleCall(app, "PUT", `${route}/provider_b`, { cookie: member.cookie, body: { apiKey: workspaceKeyB } })).status).toBe(403)

    const asAdmin = await consoleCall(app, "GET", route, { cookie: admin.cookie })
    expect(asAdmin.body.data.map((k: { provider: string; set: boolean; last4: string | null }) => [k.provider, k.set, k.last4])).toEqual([
      ["provider_a", true, "1111"],
      ["provider_b", false, null],
      ["provider_c", false, null]
    ])
    const asMember = await consoleCall(app, "GET", route, { cookie: member.cookie })
    expect(asMember.body.data[0]).toEqual({ provider: "provider_a", set: true, last4: null, createdAt: null, createdBy: null, lastUsedAt: null, lastError: null })
    for (const answer of [set, refused, asAdmin, asMember]) expect(JSON.stringify(answer.body)).not.toContain(workspaceKeyA)

    expect((await consoleCall(app, "DELETE", `${route}/provider_a`, { cookie: member.cookie })).status).toBe(403)
    const removed = await consoleCall(app, "DELETE", `${route}/provider_a`, { cookie: admin.cookie })
    expect(removed.body).toMatchObject({ provider: "provider_a", set: false })
    const audit = await consoleCall(app, "GET", `/console/api/workspaces/${id}/audit`, { cookie: admin.cookie })
    expect(audit.body.data.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(["provider_key.set", "provider_key.removed"]))
  })

  it("goes back to the service's key within a second of the workspace's key being removed", async () => {
    const { id } = await createWorkspace(app, "Removes its key")
    expect((await admin("PUT", `/admin/workspaces/${id}/provider-keys/provider_a`, { apiKey: workspaceKeyA })).status).toBe(200)
    const client = new ProviderAClient({ apiKey: (await createKey(app, id, ["COMPLETION_API"])).key, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 })
    await client.chat.completions.create({ model: "chatgen-4o-mini", messages: onlyWith(workspaceKeyA) })
    const removed = await admin("DELETE", `/admin/workspaces/${id}/provider-keys/provider_a`)
    expect(removed.body).toMatchObject({ provider: "provider_a", last4: "1111" })
    expect((await admin("DELETE", `/admin/workspaces/${id}/provider-keys/provider_a`)).status).toBe(404)
    await eventually(
      () => client.chat.completions.create({ model: "chatgen-4o-mini", messages: onlyWith(serviceKey) }).then(() => true, () => false),
      (ok) => ok,
      5_000
    )
  })
})

describe("provider keys without CREDENTIALS_KEY", () => {
  let app: MemoryApp
  beforeAll(async () => {
    app = await startApp()
  })
  afterAll(async () => {
    await app?.stop()
  })

  it("refuses to store one, saying what the operator must do", async () => {
    const { id } = await createWorkspace(app, "No credentials key")
    const refused = await call(app, "PUT", `/admin/workspaces/${id}/provider-keys/provider_c`, { token: testAdminToken, body: { apiKey: workspaceKeyA } })
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe("credentials_key_missing")
    expect(refused.body.error.message).toContain("CREDENTIALS_KEY")
    expect((await call(app, "GET", `/admin/workspaces/${id}/provider-keys`, { token: testAdminToken })).body.data).toEqual([])
  })
})

describe("a workspace's own provider key, when the provider cannot be asked", () => {
  let app: MemoryApp
  beforeAll(async () => {
    // A port nothing listens on: the key check cannot reach the provider.
    app = await startApp({ CREDENTIALS_KEY: credentialsKey, UPSTREAM_PROVIDER_A_EU_URL: "http://127.0.0.1:9", UPSTREAM_PROVIDER_A_EU_KEY: serviceKey })
  })
  afterAll(async () => {
    await app?.stop()
  })

  it("answers 502 provider_unreachable in the admin format and saves nothing", async () => {
    const { id } = await createWorkspace(app, "Unreachable provider")
    const answer = await call(app, "PUT", `/admin/workspaces/${id}/provider-keys/provider_a`, { token: testAdminToken, body: { apiKey: workspaceKeyA } })
    expect(answer.status).toBe(502)
    expect(answer.body.error).toMatchObject({ code: "provider_unreachable" })
    expect(answer.body.error.message).toContain("It was not saved")
    const listed = await call(app, "GET", `/admin/workspaces/${id}/provider-keys`, { token: testAdminToken })
    expect(listed.body.data).toEqual([])
  })
})
