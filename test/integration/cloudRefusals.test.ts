import ProviderBClient from "@anthropic-ai/sdk"
import ProviderAClient from "openai"
import { Context, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SimulatorAddress } from "../../src/simulator/server"
import { defaultSimulatorSettings } from "../../src/simulator/settings"
import { simulatorTestLayer } from "../simulator/harness"
import { call, createKey, createWorkspace, type MemoryApp, startApp } from "../support/app"
import { parsePrometheusText } from "../support/prometheusText"
import { tempDir } from "../support/tempDirs"

/**
 * The clouds' refusals and Azure's /openai/v1 API through the gateway, as the provider client libraries see
 * them: Azure's content filter (either API) is the chat format's 400 `content_filter`, Bedrock's
 * ThrottlingException and Vertex's RESOURCE_EXHAUSTED are the messages format's 429; the upstream metrics name the
 * deployment. The simulator answers as each cloud, its faults asked for in the prompt.
 */

const simulatorKey = "simulator-cloud-key"
const chatModel = "chatgen-4o-mini"
const messagesModel = "assistantmodel-sonnet-4-5-20250929"

const routesFile = (simulator: string, serviceAccountFile: string) => `
routes:
  provider_a/eu:
    - name: azure-v1
      kind: azure
      url: ${simulator}
      auth: { apiKey: { env: AZURE_KEY } }
      models: { ${chatModel}: ${chatModel}-prod }
  provider_a/us:
    - name: azure-classic
      kind: azure
      url: ${simulator}
      apiVersion: "2024-10-21"
      auth: { apiKey: { env: AZURE_KEY } }
      models: { ${chatModel}: ${chatModel}-prod }
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

/** The client library's error, or a failure of the test when the call succeeded. */
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail("the call succeeded"),
    (error: unknown) => error
  )

describe("the clouds' refusals through the gateway, with the provider client libraries", () => {
  const scope = Effect.runSync(Scope.make())
  let app: MemoryApp
  let key: string

  beforeAll(async () => {
    const context = await Effect.runPromise(
      Layer.buildWithScope(simulatorTestLayer({ apiKey: Option.some(Redacted.make(simulatorKey)) }), scope)
    )
    const simulator = Context.get(context, SimulatorAddress).baseUrl
    const folder = tempDir("cloud-refusals-")
    const serviceAccount = path.join(folder, "vertex-sa.json")
    fs.writeFileSync(serviceAccount, await (await fetch(`${simulator}/vertex/service-account.json`)).text())
    const file = path.join(folder, "upstreams.yaml")
    fs.writeFileSync(file, routesFile(simulator, serviceAccount))
    app = await startApp({
      UPSTREAMS_FILE: file,
      AZURE_KEY: simulatorKey,
      BEDROCK_KEY_ID: defaultSimulatorSettings.aws.accessKeyId,
      BEDROCK_SECRET: Redacted.value(defaultSimulatorSettings.aws.secretAccessKey)
    })
    key = (await createKey(app, (await createWorkspace(app)).id, ["COMPLETION_API"])).key
  })

  afterAll(async () => {
    await app?.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  const chat = (region: string) => new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/${region}/v1`, maxRetries: 0 })
  const messages = (region: string) => new ProviderBClient({ apiKey: key, baseURL: `${app.url}/provider_b/${region}`, maxRetries: 0 })

  it("Azure's /openai/v1 API (a deployment without apiVersion): JSON and streams as the provider's API", async () => {
    const completion = await chat("eu").chat.completions.create({ model: chatModel, messages: [{ role: "user", content: "Say hello" }] })
    expect(completion.choices[0]!.message.content).toEqual(expect.any(String))
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0)
    expect(JSON.stringify(completion)).not.toContain("filter_results")
    const stream = await chat("eu").chat.completions.create({
      model: chatModel,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "Count to three" }]
    })
    const chunks = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks.slice(0, -1).every((chunk) => chunk.choices.length === 1)).toBe(true)
    expect(chunks.at(-1)!.usage!.completion_tokens).toBeGreaterThan(0)
  })

  it.each(["eu", "us"])("Azure's content filter (%s) reaches the client as a 400 BadRequestError with code content_filter", async (region) => {
    const error = await failureOf(chat(region).chat.completions.create({
      model: chatModel,
      messages: [{ role: "user", content: "Something refused [simulator fault=content_filter]" }]
    }))
    expect(error).toBeInstanceOf(ProviderAClient.BadRequestError)
    expect(error).toMatchObject({ status: 400, code: "content_filter" })
  })

  it("Bedrock's ThrottlingException reaches the client as a RateLimitError (429)", async () => {
    const error = await failureOf(messages("eu").messages.create({
      model: messagesModel,
      max_tokens: 50,
      messages: [{ role: "user", content: "Hello [simulator fault=rate_limit]" }]
    }))
    expect(error).toBeInstanceOf(ProviderBClient.RateLimitError)
    expect(error).toMatchObject({ status: 429, error: { type: "error", error: { type: "rate_limit_error" } } })
  })

  it("Vertex's 429 reaches the client as a RateLimitError", async () => {
    const error = await failureOf(messages("us").messages.create({
      model: messagesModel,
      max_tokens: 50,
      messages: [{ role: "user", content: "Hello [simulator fault=rate_limit]" }]
    }))
    expect(error).toBeInstanceOf(ProviderBClient.RateLimitError)
    expect(error).toMatchObject({ status: 429, error: { type: "error", error: { type: "rate_limit_error" } } })
  })

  it("labels the upstream durations with the deployment that answered", async () => {
    await messages("eu").messages.create({ model: messagesModel, max_tokens: 20, messages: [{ role: "user", content: "Hi" }] })
    await chat("eu").chat.completions.create({ model: chatModel, messages: [{ role: "user", content: "Hi" }] })
    const scrape = parsePrometheusText((await call(app, "GET", "/metrics")).body as string)
    expect(scrape.sum("wsapi_upstream_duration_seconds_count", { provider: "provider_b", region: "eu", deployment: "bedrock-frankfurt" }))
      .toBeGreaterThanOrEqual(1)
    expect(scrape.sum("wsapi_upstream_duration_seconds_count", { provider: "provider_a", region: "eu", deployment: "azure-v1" }))
      .toBeGreaterThanOrEqual(1)
    expect(scrape.sum("wsapi_upstream_duration_seconds_count", { deployment: "vertex-us-east5" })).toBeGreaterThanOrEqual(1)
  })
})
