import ProviderBClient from "@anthropic-ai/sdk"
import ProviderAClient from "openai"
import { Context, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exportLayouts } from "../../src/domain/exportLayouts"
import { SimulatorAddress } from "../../src/simulator/server"
import { simulatorTestLayer } from "../simulator/harness"
import { createKey, createWorkspace, type MemoryApp, startApp } from "../support/app"
import { eventually } from "../support/fakeUpstream"
import { tempDir } from "../support/tempDirs"
import { datePoint, ingest, message, runExport } from "../support/usage"

/**
 * The operator's catalog (DESIGN "The operator's catalog") read everywhere, through the official client: a routes
 * file's catalog entry is listed, accepted, held to its own output limit, priced with its own prices in the usage
 * record and the models export; `catalogMode: replace` leaves the built-in models out; a route lists only the
 * models a deployment of it serves.
 */

const simulatorKey = "simulator-catalog-key"
const ownModel = "chatgen-4o-mini-2024-07-18"
const prices = { input: 0.15, output: 0.6 }

const catalogEntry = `
  - id: ${ownModel}
    provider: provider_a
    family: chat_completions
    contextTokens: 128000
    maxOutputTokens: 16384
    pricesPerMillion: { input: ${prices.input}, output: ${prices.output} }
`

/**
 * provider_a/eu is one native deployment at the test's simulator, whose map serves the operator's model (as the
 * simulator's chatgen-4o-mini) and chatgen-4o, not the built-in chatgen-4o-mini; the other routes are the app's own
 * simulator, serving the whole catalog.
 */
/** An embeddings model of the operator's (extend mode only): the embeddings endpoint takes the catalog's models of its family. */
const ownEmbeddings = "text-embedding-own-small"
const embeddingsEntry = `
  - id: ${ownEmbeddings}
    provider: provider_a
    family: embeddings
    contextTokens: 8191
    tokenizer: cl100k_base
    pricesPerMillion: { input: 0.02, output: 0 }
`

const routesFile = (simulator: string, mode: "extend" | "replace") => `
catalogMode: ${mode}
catalog:${catalogEntry}${mode === "extend" ? embeddingsEntry : ""}
routes:
  provider_a/eu:
    - name: simulator-eu
      kind: native
      url: ${simulator}
      auth: { apiKey: { env: SIMULATOR_KEY } }
      models:
        ${ownModel}: chatgen-4o-mini
${mode === "extend" ? `        chatgen-4o: chatgen-4o\n        ${ownEmbeddings}: text-embedding-3-small\n` : ""}`

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)
const user = (content: string) => [{ role: "user" as const, content }]

describe("the operator's catalog through the gateway, with the provider client libraries", () => {
  const scope = Effect.runSync(Scope.make())
  const apps: Record<"extend" | "replace", MemoryApp | undefined> = { extend: undefined, replace: undefined }
  const keys = { extend: "", replace: "", exports: "" }
  let workspaceId = ""

  beforeAll(async () => {
    const context = await Effect.runPromise(
      Layer.buildWithScope(simulatorTestLayer({ apiKey: Option.some(Redacted.make(simulatorKey)) }), scope)
    )
    const simulator = Context.get(context, SimulatorAddress).baseUrl
    const folder = tempDir("operator-catalog-")
    for (const mode of ["extend", "replace"] as const) {
      const file = path.join(folder, `upstreams-${mode}.yaml`)
      fs.writeFileSync(file, routesFile(simulator, mode))
      const app = await startApp({ UPSTREAMS_FILE: file, SIMULATOR_KEY: simulatorKey })
      apps[mode] = app
      const workspace = await createWorkspace(app)
      keys[mode] = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
      if (mode === "extend") {
        workspaceId = workspace.id
        keys.exports = (await createKey(app, workspace.id, ["USAGE_EXPORT_API"])).key
      }
    }
  })

  afterAll(async () => {
    await apps.extend?.stop()
    await apps.replace?.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  const chat = (mode: "extend" | "replace", region: string) =>
    new ProviderAClient({ apiKey: keys[mode], baseURL: `${apps[mode]!.url}/provider_a/${region}/v1`, maxRetries: 0 })
  const messages = (mode: "extend" | "replace") =>
    new ProviderBClient({ apiKey: keys[mode], baseURL: `${apps[mode]!.url}/provider_b/eu`, maxRetries: 0 })
  const listed = async (client: ProviderAClient) => {
    const ids: Array<string> = []
    for await (const model of client.models.list()) ids.push(model.id)
    return ids
  }

  it("lists the operator's model on a route that serves it, and only the models a deployment of the route serves", async () => {
    expect(await listed(chat("extend", "eu"))).toEqual(["chatgen-4o", ownModel, ownEmbeddings])
    expect((await chat("extend", "eu").models.retrieve(ownModel)).id).toBe(ownModel)
    // The built-in chatgen-4o-mini is in the catalog, but the eu deployment's map lacks it: neither listed nor served there.
    expect(await failureOf(chat("extend", "eu").models.retrieve("chatgen-4o-mini"))).toBeInstanceOf(ProviderAClient.NotFoundError)
    expect(await failureOf(chat("extend", "eu").chat.completions.create({ model: "chatgen-4o-mini", messages: user("x") })))
      .toBeInstanceOf(ProviderAClient.NotFoundError)
    // A route whose deployment has no map serves the whole catalog.
    expect(await listed(chat("extend", "us"))).toEqual(expect.arrayContaining(["chatgen-4o-mini", "chatgen-4o", ownModel]))
  })

  it("takes the operator's embeddings model on the embeddings endpoint, and refuses the built-in one its route does not serve", async () => {
    const embedding = await chat("extend", "eu").embeddings.create({ model: ownEmbeddings, input: "hello" })
    expect(embedding.data[0]!.embedding.length).toBeGreaterThan(0)
    const refused = await failureOf(chat("extend", "eu").embeddings.create({ model: "text-embedding-ada-002", input: "hello" }))
    expect(refused).toBeInstanceOf(ProviderAClient.NotFoundError)
    expect((refused as Error).message).toContain(`use ${ownEmbeddings}.`)
  })

  it("accepts the operator's model, refuses output beyond its limit naming max_tokens, and records it at its own prices", async () => {
    const { data: completion, response } = await chat("extend", "eu").chat.completions.create({
      model: ownModel,
      max_tokens: 50,
      messages: user("Say hello")
    }).withResponse()
    expect(completion.choices[0]!.message.content).toEqual(expect.any(String))
    const requestId = response.headers.get("x-request-id")
    const row = (await eventually(
      () => [...(apps.extend!.usage.workspaces.get(workspaceId)?.requests.values() ?? [])].find((found) => found.requestId === requestId),
      (found) => found !== undefined
    ))!
    expect(row).toMatchObject({ model: ownModel, region: "eu", deployment: "simulator-eu", status: 200 })
    expect(row.inputTokens).toBe(completion.usage!.prompt_tokens)
    expect(row.costUsd).toBeCloseTo((row.inputTokens * prices.input + row.outputTokens * prices.output) / 1_000_000, 9)
    expect(row.costUsd).toBeGreaterThan(0)

    const over = await failureOf(chat("extend", "eu").chat.completions.create({ model: ownModel, max_tokens: 16_385, messages: user("x") }))
    expect(over).toBeInstanceOf(ProviderAClient.BadRequestError)
    expect(over).toMatchObject({ status: 400, param: "max_tokens" })
    expect((over as Error).message).toContain("at most 16384 completion tokens")
    // Refused by the gateway, not upstream: an upstream's 400 would be recorded (and the next request's row comes after it).
    const next = await chat("extend", "eu").chat.completions.create({ model: ownModel, max_tokens: 16_384, messages: user("x") }).withResponse()
    const nextId = next.response.headers.get("x-request-id")
    const rows = await eventually(
      () => [...(apps.extend!.usage.workspaces.get(workspaceId)?.requests.values() ?? [])],
      (found) => found.some((candidate) => candidate.requestId === nextId)
    )
    expect(rows.filter((candidate) => candidate.status === 400)).toEqual([])
  })

  it("prices the operator's model in the models export: its API requests and platform messages, with its provider", async () => {
    const now = new Date()
    const today = now.toISOString().slice(0, 10)
    const tomorrow = new Date(now.getTime() + 86_400_000).toISOString().slice(0, 10)
    await ingest(apps.extend!, workspaceId, [
      message("catalog-m1", now.toISOString(), { model: ownModel, inputTokens: 1_000_000, outputTokens: 1_000_000 })
    ])
    const { response } = await chat("extend", "eu").chat.completions.create({ model: ownModel, messages: user("Once more") }).withResponse()
    const requestId = response.headers.get("x-request-id")
    const requests = (await eventually(
      () => [...(apps.extend!.usage.workspaces.get(workspaceId)?.requests.values() ?? [])],
      (rows) => rows.some((row) => row.requestId === requestId)
    )).filter((row) => row.model === ownModel)
    const range = { from: datePoint(`${today}T00:00:00`, "UTC"), to: datePoint(`${tomorrow}T00:00:00`, "UTC") }
    const exported = await runExport(apps.extend!, keys.exports, "models", range)
    expect(exported.status).toBe(200)
    const columns = exportLayouts.models.columns.map((column) => column.name)
    const rows = exported.lines!.slice(1).map((line) => Object.fromEntries(line.split(",").map((cell, index) => [columns[index]!, cell])))
    const own = rows.filter((row) => row.model === ownModel)
    const platform = own.find((row) => row.source === "platform")
    const api = own.find((row) => row.source === "api")
    // A million tokens each way: 0.15 + 0.6 US dollars.
    expect(platform).toMatchObject({ provider: "provider_a", cost_usd: "0.750000" })
    expect(api).toMatchObject({ provider: "provider_a", region: "eu", requests: String(requests.length), deployment: "simulator-eu" })
    const cost = requests.reduce((sum, row) => sum + (row.inputTokens * prices.input + row.outputTokens * prices.output) / 1_000_000, 0)
    expect(Number(api!.cost_usd)).toBeCloseTo(cost, 6)
  })

  it("catalogMode replace: only the operator's entries are listed and accepted, every built-in model is refused as unknown", async () => {
    expect(await listed(chat("replace", "eu"))).toEqual([ownModel])
    // The app's own simulator serves the other routes, which list no built-in model either.
    expect(await listed(chat("replace", "us"))).toEqual([ownModel])
    const completion = await chat("replace", "eu").chat.completions.create({ model: ownModel, messages: user("Say hello") })
    expect(completion.choices[0]!.message.content).toEqual(expect.any(String))
    for (const region of ["eu", "us"]) {
      expect(await failureOf(chat("replace", region).chat.completions.create({ model: "chatgen-4o", messages: user("x") })))
        .toBeInstanceOf(ProviderAClient.NotFoundError)
    }
    const messagesRefused = await failureOf(
      messages("replace").messages.create({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 10, messages: user("x") })
    )
    expect(messagesRefused).toBeInstanceOf(ProviderBClient.NotFoundError)
    const messagesModels = []
    for await (const model of messages("replace").models.list()) messagesModels.push(model.id)
    expect(messagesModels).toEqual([])
  })
})
