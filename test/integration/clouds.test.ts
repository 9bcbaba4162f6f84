import ProviderBClient from "@anthropic-ai/sdk"
import ProviderAClient from "openai"
import { Context, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SimulatorAddress } from "../../src/simulator/server"
import { defaultSimulatorSettings } from "../../src/simulator/settings"
import { simulatorTestLayer } from "../simulator/harness"
import { call, createKey, createWorkspace, type PostgresApp, startApp, testAdminToken } from "../support/app"
import { query } from "../support/database"
import { eventually } from "../support/fakeUpstream"
import { tempDir } from "../support/tempDirs"

/**
 * The provider client libraries through the gateway to each simulated cloud, with a routes file as an operator
 * writes it: Azure (classic deployments) for provider_a/eu, Bedrock for provider_b/eu, Vertex for provider_b/us,
 * and provider_a/us failing over from a deployment that is down to a native one.
 */

const simulatorKey = "simulator-cloud-key"
const chatModel = "chatgen-4o-mini"
const messagesModel = "assistantmodel-sonnet-4-5-20250929"

const routesFile = (simulator: string, serviceAccountFile: string) => `
cooldownSeconds: 60
routes:
  provider_a/eu:
    - name: azure-sweden
      kind: azure
      url: ${simulator}
      apiVersion: "2024-10-21"
      auth: { apiKey: { env: AZURE_SE_KEY } }
      models:
        ${chatModel}: ${chatModel}-prod
        text-embedding-ada-002: text-embedding-ada-002-prod
  provider_a/us:
    - name: native-down
      kind: native
      url: http://127.0.0.1:1
      auth: { apiKey: { env: NATIVE_KEY } }
    - name: native-backup
      kind: native
      url: ${simulator}
      auth: { apiKey: { env: NATIVE_KEY } }
      priority: 1
  provider_b/eu:
    - name: bedrock-frankfurt
      kind: bedrock
      region: eu-central-1
      url: ${simulator}
      auth: { aws: { accessKeyId: { env: BEDROCK_KEY_ID }, secretAccessKey: { env: BEDROCK_SECRET } } }
      models: { ${messagesModel}: eu.provider_b.${messagesModel}-v1:0 }
  provider_b/us:
    - name: vertex-us-east5
      kind: vertex
      project: acme-ai
      location: us-east5
      url: ${simulator}
      auth: { gcpServiceAccount: { file: ${serviceAccountFile} } }
      models: { ${messagesModel}: assistantmodel-sonnet-4-5@20250929 }
`

interface UsageRow {
  readonly model: string
  readonly region: string
  readonly deployment: string | null
  readonly status: number
  readonly stream: boolean
  readonly input_tokens: number
  readonly output_tokens: number
}

describe("the clouds through the gateway, with the provider client libraries", () => {
  const scope = Effect.runSync(Scope.make())
  let app: PostgresApp
  let workspaceId: string
  let key: string

  beforeAll(async () => {
    const context = await Effect.runPromise(
      Layer.buildWithScope(simulatorTestLayer({ apiKey: Option.some(Redacted.make(simulatorKey)) }), scope)
    )
    const simulator = Context.get(context, SimulatorAddress).baseUrl
    const folder = tempDir("clouds-")
    const serviceAccount = path.join(folder, "vertex-sa.json")
    fs.writeFileSync(serviceAccount, await (await fetch(`${simulator}/vertex/service-account.json`)).text())
    const file = path.join(folder, "upstreams.yaml")
    fs.writeFileSync(file, routesFile(simulator, serviceAccount))
    app = await startApp({
      UPSTREAMS_FILE: file,
      AZURE_SE_KEY: simulatorKey,
      NATIVE_KEY: simulatorKey,
      BEDROCK_KEY_ID: defaultSimulatorSettings.aws.accessKeyId,
      BEDROCK_SECRET: Redacted.value(defaultSimulatorSettings.aws.secretAccessKey)
    }, { stores: "postgres" })
    const workspace = await createWorkspace(app)
    workspaceId = workspace.id
    key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
  })

  afterAll(async () => {
    await app?.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  const rows = async (requestId: string) =>
    (await eventually(
      () => query<UsageRow>(app.databaseUrl, "SELECT * FROM api_requests WHERE workspace_id = $1 AND request_id = $2", [workspaceId, requestId]),
      (found) => found.length === 1
    ))[0]

  const chat = (region: string) => new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/${region}/v1`, maxRetries: 0 })
  const messages = (region: string) => new ProviderBClient({ apiKey: key, baseURL: `${app.url}/provider_b/${region}`, maxRetries: 0 })

  it("Azure: chat JSON and streams look like the provider's API, the filter chunk and verdicts removed, usage recorded", async () => {
    const { data: completion, response } = await chat("eu").chat.completions.create({
      model: chatModel,
      messages: [{ role: "user", content: "Say hello" }]
    }).withResponse()
    expect(completion.choices[0]!.message.content).toEqual(expect.any(String))
    expect(JSON.stringify(completion)).not.toContain("filter_results")
    const row = await rows(response.headers.get("x-request-id")!)
    expect(row).toMatchObject({ model: chatModel, region: "eu", deployment: "azure-sweden", status: 200 })
    expect(row!.input_tokens).toBe(completion.usage!.prompt_tokens)

    const stream = await chat("eu").chat.completions.create({
      model: chatModel,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "Count to three" }]
    })
    const chunks = []
    for await (const chunk of stream) chunks.push(chunk)
    // The cloud's opening chunk (no choices, its prompt verdicts) is not relayed: every chunk but the usage one has a choice.
    expect(chunks.slice(0, -1).every((chunk) => chunk.choices.length === 1)).toBe(true)
    expect(chunks.at(-1)!.usage!.completion_tokens).toBeGreaterThan(0)
    expect(JSON.stringify(chunks)).not.toContain("filter_results")
  })

  it("Azure: embeddings go to the deployment of the embeddings model", async () => {
    const embedding = await chat("eu").embeddings.create({ model: "text-embedding-ada-002", input: "hello" })
    expect(embedding.data[0]!.embedding.length).toBeGreaterThan(0)
  })

  it("a model no deployment of the route serves is not found there, and listed on no route that lacks it", async () => {
    const refused = await chat("eu").chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "x" }] }).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(refused).toBeInstanceOf(ProviderAClient.NotFoundError)
  })

  it("Bedrock: messages JSON and the event stream relayed as the messages SSE stream, usage recorded", async () => {
    const { data: message, response } = await messages("eu").messages.create({
      model: messagesModel,
      max_tokens: 100,
      messages: [{ role: "user", content: "Say hello" }]
    }).withResponse()
    expect(message).toMatchObject({ type: "message", role: "assistant" })
    const row = await rows(response.headers.get("x-request-id")!)
    expect(row).toMatchObject({ model: messagesModel, region: "eu", deployment: "bedrock-frankfurt", status: 200 })

    const stream = messages("eu").messages.stream({ model: messagesModel, max_tokens: 100, messages: [{ role: "user", content: "Tell a story" }] })
    const final = await stream.finalMessage()
    expect(final.content[0]).toMatchObject({ type: "text", text: expect.any(String) })
    expect(final.usage.output_tokens).toBeGreaterThan(0)
    const streamRow = await rows(stream.request_id ?? "")
    expect(streamRow).toMatchObject({ deployment: "bedrock-frankfurt", stream: true, output_tokens: final.usage.output_tokens })
  })

  it("Vertex: messages JSON and streams with a token of the service account, usage recorded", async () => {
    const { data: message, response } = await messages("us").messages.create({
      model: messagesModel,
      max_tokens: 100,
      messages: [{ role: "user", content: "Say hello" }]
    }).withResponse()
    expect(message).toMatchObject({ type: "message", role: "assistant" })
    expect(await rows(response.headers.get("x-request-id")!)).toMatchObject({ region: "us", deployment: "vertex-us-east5" })
    const final = await messages("us").messages.stream({ model: messagesModel, max_tokens: 100, messages: [{ role: "user", content: "Go on" }] })
      .finalMessage()
    expect(final.usage.output_tokens).toBeGreaterThan(0)
  })

  it("fails over inside the route: a deployment that is down is cooled down and the next one answers", async () => {
    const { data: completion, response } = await chat("us").chat.completions.create({
      model: chatModel,
      messages: [{ role: "user", content: "Say hello" }]
    }).withResponse()
    expect(completion.choices[0]!.message.content).toEqual(expect.any(String))
    expect(await rows(response.headers.get("x-request-id")!)).toMatchObject({ region: "us", deployment: "native-backup", status: 200 })
    const upstreams = await call(app, "GET", "/admin/upstreams", { token: testAdminToken })
    if (upstreams.status === 200) {
      const down = (upstreams.body as { data: Array<{ deployment: string; state: string; failures: number }> }).data
        .find((deployment) => deployment.deployment === "native-down")
      expect(down).toMatchObject({ state: "cooling", failures: 1 })
    }
    // The second request skips the cooling deployment: it still answers, and nothing more failed.
    const again = await chat("us").chat.completions.create({ model: chatModel, messages: [{ role: "user", content: "Again" }] })
    expect(again.choices[0]!.message.content).toEqual(expect.any(String))
  })
})
