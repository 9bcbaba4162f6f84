import ProviderAClient from "openai"
import type * as http from "node:http"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { call, createKey, createWorkspace, type MemoryApp, startApp, testAdminToken } from "../support/app"
import { chatCompletionAnswer, type FakeUpstream, type SeenRequest, startFakeUpstream } from "../support/fakeUpstream"
import { tempDir } from "../support/tempDirs"

/**
 * Failover inside a route (DESIGN "Failover") through the whole service: a routes file of fake upstreams,
 * each answering as the test says, and the provider's client library calling the gateway.
 */

const upstreamKey = "upstream-key-0123456789"
const model = "chatgen-4o-mini"

type Behaviour = (request: SeenRequest, response: http.ServerResponse) => void

const answers: Behaviour = (_request, response) => {
  response.writeHead(200, { "content-type": "application/json" })
  response.end(chatCompletionAnswer())
}

/** The provider's error body at a status, with optional extra headers (retry hints). */
const failsWith = (status: number, headers: Record<string, string> = {}): Behaviour => (_request, response) => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(JSON.stringify({ error: { message: `failed with ${status}`, type: "upstream_error", code: null } }))
}

const chunk = (delta: Record<string, unknown>, finish: string | null) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

/** A whole chat stream: two chunks, the usage chunk, [DONE]. */
const streams: Behaviour = (_request, response) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  response.write(chunk({ role: "assistant", content: "ok" }, null))
  response.write(chunk({}, "stop"))
  response.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model, choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } })}\n\n`)
  response.end("data: [DONE]\n\n")
}

/** A stream that breaks after its first chunk reached the gateway. */
const breaksMidStream: Behaviour = (_request, response) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  response.write(chunk({ role: "assistant", content: "o" }, null), () => setImmediate(() => response.destroy()))
}

/** Nothing listens on port 1: every connection is refused. */
const refusing = "http://127.0.0.1:1"

interface Deployment {
  readonly name: string
  readonly route?: string
  readonly kind?: "native" | "azure"
  /** A behaviour (a fake upstream is started for it) or a URL. */
  readonly upstream: Behaviour | string
  readonly priority?: number
  readonly weight?: number
}

interface Setup {
  readonly app: MemoryApp
  readonly key: string
  /** What each deployment's fake upstream was sent. */
  readonly seen: (name: string) => ReadonlyArray<SeenRequest>
  readonly client: (region?: string) => ProviderAClient
  readonly upstreams: () => Promise<ReadonlyArray<Listed>>
}

interface Listed {
  readonly route: string
  readonly deployment: string
  readonly state: string
  readonly coolingUntil?: string
  readonly requests: number
  readonly failures: number
}

const started: Array<{ stop: () => Promise<void> }> = []
afterEach(async () => {
  for (const each of started.splice(0)) await each.stop()
})

/** The service with a routes file of these deployments (provider_a/eu unless said), a workspace and a key. */
const setUp = async (deployments: ReadonlyArray<Deployment>, options: { cooldownSeconds?: number; env?: Record<string, string> } = {}): Promise<Setup> => {
  const fakes = new Map<string, FakeUpstream>()
  for (const deployment of deployments) {
    if (typeof deployment.upstream === "string") continue
    const fake = await startFakeUpstream(deployment.upstream)
    fakes.set(deployment.name, fake)
    started.push({ stop: fake.close })
  }
  const byRoute = new Map<string, Array<Deployment>>()
  for (const deployment of deployments) {
    const route = deployment.route ?? "provider_a/eu"
    byRoute.set(route, [...(byRoute.get(route) ?? []), deployment])
  }
  const yaml = [
    `cooldownSeconds: ${options.cooldownSeconds ?? 30}`,
    "routes:",
    ...[...byRoute].flatMap(([route, list]) => [
      `  ${route}:`,
      ...list.flatMap((deployment) => [
        `    - name: ${deployment.name}`,
        `      kind: ${deployment.kind ?? "native"}`,
        `      url: ${typeof deployment.upstream === "string" ? deployment.upstream : fakes.get(deployment.name)!.url}`,
        "      auth: { apiKey: { env: UPSTREAM_KEY } }",
        `      priority: ${deployment.priority ?? 0}`,
        `      weight: ${deployment.weight ?? 1}`,
        ...(deployment.kind === "azure" ? [`      models: { ${model}: ${model}-prod }`] : [])
      ])
    ])
  ].join("\n")
  const file = path.join(tempDir("failover-"), "upstreams.yaml")
  fs.writeFileSync(file, yaml)
  const app = await startApp({ UPSTREAMS_FILE: file, UPSTREAM_KEY: upstreamKey, ...options.env })
  started.push(app)
  const workspace = await createWorkspace(app)
  const key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
  return {
    app,
    key,
    seen: (name) => fakes.get(name)?.seen ?? [],
    client: (region = "eu") => new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/${region}/v1`, maxRetries: 0 }),
    upstreams: async () => {
      const answer = await call(app, "GET", "/admin/upstreams", { token: testAdminToken })
      expect(answer.status).toBe(200)
      return answer.body.data
    }
  }
}

const ask = (client: ProviderAClient) => client.chat.completions.create({ model, messages: [{ role: "user", content: "hello" }] }).withResponse()

/** The client library's error, or a failure of the test when the call succeeded. */
const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail("the call succeeded"),
    (error: unknown) => error as InstanceType<typeof ProviderAClient.APIError>
  )

const listed = (list: ReadonlyArray<Listed>, name: string) => list.find((deployment) => deployment.deployment === name)!

describe("failover inside a route", () => {
  it("429 with retry-after: the next deployment answers, the first cools for the retry-after and is skipped meanwhile", async () => {
    const setup = await setUp([
      { name: "busy", upstream: failsWith(429, { "retry-after": "7" }) },
      { name: "spare", upstream: answers, priority: 1 }
    ])
    const before = Date.now()
    const { data, response } = await ask(setup.client())
    expect(data.choices[0]!.message.content).toBe("ok")
    // The failed attempt's hint is not the client's: it got an answer.
    expect(response.headers.get("retry-after")).toBeNull()
    expect([setup.seen("busy").length, setup.seen("spare").length]).toEqual([1, 1])
    const list = await setup.upstreams()
    expect(listed(list, "busy")).toMatchObject({ state: "cooling", requests: 1, failures: 1 })
    const until = Date.parse(listed(list, "busy").coolingUntil!)
    expect(until).toBeGreaterThanOrEqual(before + 7_000)
    expect(until).toBeLessThanOrEqual(Date.now() + 7_000)
    expect(listed(list, "spare")).toMatchObject({ state: "available", requests: 1, failures: 0 })

    await ask(setup.client())
    expect([setup.seen("busy").length, setup.seen("spare").length]).toEqual([1, 2])
  })

  it.each([408, 500, 502, 503, 504, 529])("%i: the next deployment answers", async (status) => {
    const setup = await setUp([
      { name: "failing", upstream: failsWith(status) },
      { name: "spare", upstream: answers, priority: 1 }
    ])
    const { data } = await ask(setup.client())
    expect(data.choices[0]!.message.content).toBe("ok")
    expect([setup.seen("failing").length, setup.seen("spare").length]).toEqual([1, 1])
    expect(listed(await setup.upstreams(), "failing")).toMatchObject({ state: "cooling", failures: 1 })
  })

  it("a connection refused: the next deployment answers", async () => {
    const setup = await setUp([
      { name: "down", upstream: refusing },
      { name: "spare", upstream: answers, priority: 1 }
    ])
    const { data } = await ask(setup.client())
    expect(data.choices[0]!.message.content).toBe("ok")
    expect(listed(await setup.upstreams(), "down")).toMatchObject({ state: "cooling", failures: 1 })
  })

  it.each([400, 401, 404, 422])("%i is answered at once: no other deployment is called", async (status) => {
    const setup = await setUp([
      { name: "refusing", upstream: failsWith(status) },
      { name: "spare", upstream: answers, priority: 1 }
    ])
    const error = await refusal(ask(setup.client()))
    // The service's own key refused is the service's failure (5xx); the request's refusals pass with their status.
    if (status === 401) expect(error.status).toBeGreaterThanOrEqual(500)
    else expect(error.status).toBe(status)
    expect([setup.seen("refusing").length, setup.seen("spare").length]).toEqual([1, 0])
    expect(listed(await setup.upstreams(), "refusing")).toMatchObject({ state: "available", failures: 0 })
  })

  it("calls at most UPSTREAM_MAX_ATTEMPTS deployments; when all fail the client gets the last failure, 429 with its retry-after", async () => {
    const setup = await setUp([
      { name: "first", upstream: failsWith(429, { "retry-after": "3" }) },
      { name: "second", upstream: failsWith(429, { "retry-after": "9" }), priority: 1 },
      { name: "third", upstream: answers, priority: 2 }
    ], { env: { UPSTREAM_MAX_ATTEMPTS: "2" } })
    const error = await refusal(ask(setup.client()))
    expect(error).toBeInstanceOf(ProviderAClient.RateLimitError)
    expect(error.headers?.get("retry-after")).toBe("9")
    expect([setup.seen("first").length, setup.seen("second").length, setup.seen("third").length]).toEqual([1, 1, 0])
  })

  it("a stream whose first deployment fails before any byte fails over; one that breaks after its first byte does not", async () => {
    const before = await setUp([
      { name: "unavailable", upstream: failsWith(503) },
      { name: "spare", upstream: streams, priority: 1 }
    ])
    const stream = await before.client().chat.completions.create({ model, stream: true, messages: [{ role: "user", content: "hello" }] })
    const text: Array<string> = []
    for await (const part of stream) text.push(part.choices[0]?.delta.content ?? "")
    expect(text.join("")).toBe("ok")
    expect([before.seen("unavailable").length, before.seen("spare").length]).toEqual([1, 1])

    const after = await setUp([
      { name: "breaking", upstream: breaksMidStream },
      { name: "spare", upstream: streams, priority: 1 }
    ])
    const broken = await after.client().chat.completions.create({ model, stream: true, messages: [{ role: "user", content: "hello" }] })
    const read: Array<string> = []
    // The client reads the first byte, then the stream's in-band error.
    const failure = await (async () => {
      for await (const part of broken) read.push(part.choices[0]?.delta.content ?? "")
    })().then(() => undefined, (error: unknown) => error)
    expect(read.join("")).toBe("o")
    expect(failure).toBeInstanceOf(ProviderAClient.APIError)
    expect([after.seen("breaking").length, after.seen("spare").length]).toEqual([1, 0])
  })

  it("shares requests by weight among deployments of one priority (4 : 1 over 150 requests)", async () => {
    const setup = await setUp([
      { name: "heavy", upstream: answers, weight: 4 },
      { name: "light", upstream: answers, weight: 1 },
      { name: "never", upstream: answers, priority: 1, weight: 100 }
    ])
    for (let i = 0; i < 150; i++) await ask(setup.client())
    const heavy = setup.seen("heavy").length
    // 120 expected. Outside 100..138 by chance: about 1 run in 17,000; equal shares (75 expected) land inside about
    // 1 run in 37,000 (binomial tails).
    expect(heavy).toBeGreaterThanOrEqual(100)
    expect(heavy).toBeLessThanOrEqual(138)
    expect(heavy + setup.seen("light").length).toBe(150)
    expect(setup.seen("never").length).toBe(0)
  })

  it("a request never leaves its route: every eu deployment failing, the us one is not called", async () => {
    const setup = await setUp([
      { name: "eu-down", upstream: refusing },
      { name: "eu-busy", upstream: failsWith(503), priority: 1 },
      { name: "us-fine", route: "provider_a/us", upstream: answers }
    ])
    const error = await refusal(ask(setup.client("eu")))
    expect(error.status).toBeGreaterThanOrEqual(500)
    expect(setup.seen("eu-busy").length).toBe(1)
    expect(setup.seen("us-fine").length).toBe(0)
    // The us route still answers its own requests.
    expect((await ask(setup.client("us"))).data.choices[0]!.message.content).toBe("ok")
  })

  it("Azure's retry-after-ms alone reaches the client as retry-after too, and the cooldown follows it", async () => {
    const setup = await setUp([
      { name: "azure-busy", kind: "azure", upstream: failsWith(429, { "retry-after-ms": "4000" }) }
    ], { cooldownSeconds: 300 })
    const before = Date.now()
    const error = await refusal(ask(setup.client()))
    expect(error).toBeInstanceOf(ProviderAClient.RateLimitError)
    expect(error.headers?.get("retry-after")).toBe("4")
    expect(error.headers?.get("retry-after-ms")).toBe("4000")
    const until = Date.parse(listed(await setup.upstreams(), "azure-busy").coolingUntil!)
    // Its 4 s, not the file's 300 s.
    expect(until).toBeGreaterThanOrEqual(before + 4_000)
    expect(until).toBeLessThanOrEqual(Date.now() + 4_000)
  })
})
