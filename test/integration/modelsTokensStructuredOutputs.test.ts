import ProviderBClient from "@anthropic-ai/sdk"
import { Mistral as ProviderCClient } from "@mistralai/mistralai"
import { Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import ProviderAClient from "openai"
import { zodResponseFormat } from "openai/helpers/zod"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { SimulatorAddress } from "../../src/simulator/server"
import { simulatorTestLayer } from "../simulator/harness"
import { freshDatabaseUrl, query } from "../support/database"
import { eventually } from "../support/fakeUpstream"
import { type ServiceProcess, spawnService, waitForOk } from "../support/serviceProcess"

const adminToken = "models-admin-token-0123456789"
const serviceKey = "service-upstream-key-0000"
const workspaceKey = "workspace-provider-b-key-1111"
const ownModel = "assistantmodel-3-5-sonnet-20240620"

/** A message the simulator answers only when it was sent with `key`. */
const onlyWith = (key: string, text: string) =>
  [{ role: "user" as const, content: `${text} [simulator expect_key=${createHash("sha256").update(key).digest("hex").slice(0, 32)}]` }]

// The built service on PostgreSQL, its upstreams a simulator that knows the service's key and one workspace's
// own provider_b key: the models lists, token counting and structured outputs through the official libraries.
describe("models lists, token counting and structured outputs, end to end", () => {
  let service: ServiceProcess
  let base = ""
  let databaseUrl = ""
  let dataDir = ""
  let stopUpstream: () => Promise<void> = async () => {}
  const admin = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }
  const newKey = async (workspaceId: string) =>
    (await admin("POST", `/admin/workspaces/${workspaceId}/api-keys`, { name: "app", scopes: ["COMPLETION_API"] })).body.key as string

  beforeAll(async () => {
    const scope = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(Layer.buildWithScope(
      simulatorTestLayer({ apiKey: Option.some(Redacted.make(serviceKey)), acceptedKeys: [Redacted.make(workspaceKey)] }),
      scope
    ))
    const { baseUrl } = Effect.runSync(Effect.provide(SimulatorAddress, context))
    stopUpstream = () => Effect.runPromise(Scope.close(scope, Exit.void))
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-models-"))
    databaseUrl = await freshDatabaseUrl()
    const port = String(await Effect.runPromise(freePort))
    base = `http://127.0.0.1:${port}`
    service = spawnService({
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      PORT: port,
      HOST: "127.0.0.1",
      ADMIN_TOKEN: adminToken,
      CREDENTIALS_KEY: Buffer.alloc(32, 7).toString("base64"),
      UPSTREAM_PROVIDER_A_EU_URL: baseUrl,
      UPSTREAM_PROVIDER_A_EU_KEY: serviceKey,
      UPSTREAM_PROVIDER_B_EU_URL: baseUrl,
      UPSTREAM_PROVIDER_B_EU_KEY: serviceKey,
      UPSTREAM_PROVIDER_C_EU_URL: baseUrl,
      UPSTREAM_PROVIDER_C_EU_KEY: serviceKey
    })
    await waitForOk(`${base}/readyz`)
  }, 180_000)

  afterAll(async () => {
    service?.child.kill("SIGTERM")
    await service?.exited
    await stopUpstream()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it("a workspace with its own provider_b key and model list: its list, counts sent with its key, no ledger row for a count", async () => {
    const created = await admin("POST", "/admin/workspaces", { name: "Own keys", settings: { byokModels: { provider_b: [ownModel] } } })
    const workspaceId = created.body.id as string
    expect((await admin("PUT", `/admin/workspaces/${workspaceId}/provider-keys/provider_b`, { apiKey: workspaceKey })).status).toBe(200)
    const client = new ProviderBClient({ apiKey: await newKey(workspaceId), baseURL: `${base}/provider_b/eu`, maxRetries: 0 })

    const listed = []
    for await (const model of client.models.list()) listed.push(model.id)
    expect(listed).toEqual([ownModel])
    expect((await client.models.retrieve(ownModel)).max_tokens).toBe(8_192)
    const unlisted = await client.models.retrieve("assistantmodel-sonnet-4-5-20250929").then(() => undefined, (error: unknown) => error)
    expect(unlisted).toBeInstanceOf(ProviderBClient.NotFoundError)
    expect((unlisted as Error).message).toContain("The models this workspace may use are listed at GET /provider_b/eu/v1/models.")

    // Counted upstream with the workspace's key (the simulator refuses any other for this message).
    const messages = onlyWith(workspaceKey, "How long is this question?")
    const counted = await client.messages.countTokens({ model: ownModel, messages })
    const message = await client.messages.create({ model: ownModel, max_tokens: 20, messages })
    expect(counted.input_tokens).toBe(message.usage.input_tokens)
    const refused = await client.messages.countTokens({ model: ownModel, messages: onlyWith(serviceKey, "x") }).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(refused).toBeInstanceOf(ProviderBClient.PermissionDeniedError)

    // A request after the counts, in another workspace: the recorder writes its records in the order they
    // came, so once this one's row is in the ledger a count's row, if there were one, is there too.
    const markerWorkspace = (await admin("POST", "/admin/workspaces", { name: "After the counts" })).body.id as string
    const marker = new ProviderAClient({ apiKey: await newKey(markerWorkspace), baseURL: `${base}/provider_a/eu/v1`, maxRetries: 0 })
    await marker.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] })
    await eventually(
      () => query(databaseUrl, "SELECT 1 FROM api_requests WHERE workspace_id = $1", [markerWorkspace]),
      (found) => found.length >= 1,
      20_000
    )
    const rows = await query<{ endpoint: string; byok: boolean }>(databaseUrl, "SELECT endpoint, byok FROM api_requests WHERE workspace_id = $1", [workspaceId])
    expect(rows).toEqual([{ endpoint: "messages", byok: true }])
  })

  it("structured outputs: chat.completions.parse with a zod schema gives message.parsed", async () => {
    const workspaceId = (await admin("POST", "/admin/workspaces", { name: "Structured" })).body.id as string
    const client = new ProviderAClient({ apiKey: await newKey(workspaceId), baseURL: `${base}/provider_a/eu/v1`, maxRetries: 0 })
    const Recipe = z.object({ title: z.string(), servings: z.number().int().min(1).max(8), steps: z.array(z.string()) })
    const completion = await client.chat.completions.parse({
      model: "chatgen-4o",
      messages: [{ role: "user", content: "A recipe for soup." }],
      response_format: zodResponseFormat(Recipe, "recipe")
    })
    const parsed = completion.choices[0]!.message.parsed
    expect(parsed).not.toBeNull()
    expect(Recipe.parse(parsed)).toEqual(parsed)
  })

  it("the catalog's lists through the openai and mistral clients", async () => {
    const workspaceId = (await admin("POST", "/admin/workspaces", { name: "Catalog" })).body.id as string
    const key = await newKey(workspaceId)
    const providerA = new ProviderAClient({ apiKey: key, baseURL: `${base}/provider_a/us/v1`, maxRetries: 0 })
    const ids = (await providerA.models.list()).data.map((model) => model.id)
    expect(ids).toContain("chatgen-4o-mini")
    expect(ids).toContain("text-embedding-ada-002")
    const providerC = new ProviderCClient({ apiKey: key, serverURL: `${base}/provider_c/eu` })
    const card = await providerC.models.retrieve({ modelId: "codemodel-2501" })
    expect(card).toMatchObject({ id: "codemodel-2501", type: "base", capabilities: { completionFim: true } })
  })
})
