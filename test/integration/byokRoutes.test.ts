import ProviderAClient from "openai"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, createKey, createWorkspace, type MemoryApp, startApp, testAdminToken } from "../support/app"
import { chatCompletionAnswer, eventually, type FakeUpstream, startFakeUpstream } from "../support/fakeUpstream"
import { tempDir } from "../support/tempDirs"

/**
 * A workspace's own provider key and the routes (DESIGN "Upstreams: routes and deployments", last point): it goes
 * to the route's native deployments only, even past a cloud deployment of a higher priority; a key for a provider
 * none of whose routes has a native deployment is not saved, and the answer says why.
 */

const upstreamKey = "service-upstream-key-0123456789"
const workspaceKey = "workspace-own-key-abcdefghij-2222"
const credentialsKey = "a1".repeat(32)
const model = "chatgen-4o-mini"

/** Answers the key check (GET /v1/models) and chat completions, as the provider's API and Azure both would. */
const answering = () =>
  startFakeUpstream((request, response) => {
    response.writeHead(200, { "content-type": "application/json" })
    response.end(request.path.endsWith("/models") ? JSON.stringify({ object: "list", data: [] }) : chatCompletionAnswer())
  })

describe("a workspace's own provider key goes to native deployments only", () => {
  let app: MemoryApp
  let cloud: FakeUpstream
  let native: FakeUpstream
  let bedrock: FakeUpstream

  beforeAll(async () => {
    cloud = await answering()
    native = await answering()
    bedrock = await answering()
    const file = path.join(tempDir("byok-routes-"), "upstreams.yaml")
    fs.writeFileSync(
      file,
      `
routes:
  provider_a/eu:
    - name: azure-first
      kind: azure
      url: ${cloud.url}
      apiVersion: "2024-10-21"
      auth: { apiKey: { env: UPSTREAM_KEY } }
      models: { ${model}: ${model}-prod }
    - name: native-second
      kind: native
      url: ${native.url}
      auth: { apiKey: { env: UPSTREAM_KEY } }
      priority: 1
  provider_b/eu:
    - name: bedrock-frankfurt
      kind: bedrock
      region: eu-central-1
      url: ${bedrock.url}
      auth: { aws: { accessKeyId: { env: AWS_KEY_ID }, secretAccessKey: { env: UPSTREAM_KEY } } }
      models: { assistantmodel-sonnet-4-5-20250929: eu.provider_b.assistantmodel-sonnet-4-5-20250929-v1:0 }
  provider_b/us:
    - name: bedrock-virginia
      kind: bedrock
      region: us-east-1
      url: ${bedrock.url}
      auth: { aws: { accessKeyId: { env: AWS_KEY_ID }, secretAccessKey: { env: UPSTREAM_KEY } } }
      models: { assistantmodel-sonnet-4-5-20250929: us.provider_b.assistantmodel-sonnet-4-5-20250929-v1:0 }
`
    )
    app = await startApp({ UPSTREAMS_FILE: file, UPSTREAM_KEY: upstreamKey, AWS_KEY_ID: "AKIDEXAMPLE", CREDENTIALS_KEY: credentialsKey })
  })

  afterAll(async () => {
    await app?.stop()
    for (const fake of [cloud, native, bedrock]) await fake?.close()
  })

  const admin = (method: string, route: string, body?: unknown) =>
    call(app, method, route, { token: testAdminToken, ...(body === undefined ? {} : { body }) })
  const ask = (key: string) =>
    new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 }).chat.completions.create({
      model,
      messages: [{ role: "user", content: "hello" }]
    })

  it("refuses a key for a provider none of whose routes has a native deployment, with a 400 that says so", async () => {
    const { id } = await createWorkspace(app, "Clouds only")
    const refused = await admin("PUT", `/admin/workspaces/${id}/provider-keys/provider_b`, { apiKey: workspaceKey })
    expect(refused.status).toBe(400)
    expect(refused.body.error.code).toBe("provider_key_unusable")
    expect(refused.body.error.message).toContain("No route of provider_b has a native deployment")
    expect(refused.body.error.message).toContain("not saved")
    expect(JSON.stringify(refused.body)).not.toContain(workspaceKey)
    // Nothing asked of the clouds, nothing saved.
    expect(bedrock.seen).toEqual([])
    expect((await admin("GET", `/admin/workspaces/${id}/provider-keys`)).body.data).toEqual([])
  })

  it("sends a BYOK request to the native deployment even when a cloud deployment of a higher priority exists", async () => {
    const own = await createWorkspace(app, "Own key")
    const saved = await admin("PUT", `/admin/workspaces/${own.id}/provider-keys/provider_a`, { apiKey: workspaceKey })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    // The key was checked at the native deployment, never at the cloud.
    expect(native.seen.map((request) => request.headers.authorization)).toEqual([`Bearer ${workspaceKey}`])
    expect(cloud.seen).toEqual([])

    const ownKey = (await createKey(app, own.id, ["COMPLETION_API"])).key
    expect((await ask(ownKey)).choices[0]!.message.content).toBe("ok")
    expect(cloud.seen).toEqual([])
    expect(native.seen.at(-1)).toMatchObject({ path: "/v1/chat/completions", headers: { authorization: `Bearer ${workspaceKey}` } })

    // Another workspace, with the service's key: the cloud of priority 0.
    const other = await createWorkspace(app, "Service key")
    await ask((await createKey(app, other.id, ["COMPLETION_API"])).key)
    expect(cloud.seen).toHaveLength(1)
    expect(cloud.seen[0]!.headers["api-key"]).toBe(upstreamKey)
    expect(native.seen).toHaveLength(2)
    // Recorded off the request path: awaited.
    const rows = await eventually(
      () => [own.id, other.id].flatMap((id) => [...(app.usage.workspaces.get(id)?.requests.values() ?? [])]),
      (found) => found.length === 2
    )
    expect(rows.map((row) => [row.workspaceId, row.deployment, row.byok])).toEqual(expect.arrayContaining([
      [own.id, "native-second", true],
      [other.id, "azure-first", false]
    ]))
  })
})
