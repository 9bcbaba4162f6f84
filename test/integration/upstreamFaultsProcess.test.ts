import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDir } from "../support/tempDirs"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { freshDatabaseUrl } from "../support/database"
import { type ServiceProcess, spawnService, waitForOk } from "../support/serviceProcess"

/**
 * Issue 25, finding 1: no upstream answer can end the process. The built service (as `npm start` runs it,
 * so that an unhandled 'error' event would kill it) against its built-in simulator, which answers each
 * forwarded endpoint as a misbehaving upstream does. Every answer is a proper error in the endpoint's
 * format — a status before any byte went out, the stream's in-band error after — and the service answers
 * the next request.
 */

const adminToken = "upstream-faults-admin-token-0123456789"
const admin = { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }

type Provider = "provider_a" | "provider_b" | "provider_c"

interface Endpoint {
  readonly name: string
  readonly provider: Provider
  readonly path: string
  readonly streams: boolean
  readonly body: (said: string, stream: boolean) => unknown
}

const endpoints: ReadonlyArray<Endpoint> = [
  {
    name: "provider_a chat completions",
    provider: "provider_a",
    path: "/provider_a/eu/v1/chat/completions",
    streams: true,
    body: (said, stream) => ({ model: "chatgen-4o", stream, messages: [{ role: "user", content: said }] })
  },
  {
    name: "provider_a embeddings",
    provider: "provider_a",
    path: "/provider_a/eu/v1/embeddings",
    streams: false,
    body: (said) => ({ model: "text-embedding-ada-002", input: said, encoding_format: "float" })
  },
  {
    name: "provider_b messages",
    provider: "provider_b",
    path: "/provider_b/eu/v1/messages",
    streams: true,
    body: (said, stream) => ({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 64, stream, messages: [{ role: "user", content: said }] })
  },
  {
    name: "provider_c FIM",
    provider: "provider_c",
    path: "/provider_c/eu/v1/fim/completions",
    streams: true,
    body: (said, stream) => ({ model: "codemodel-2501", stream, prompt: said })
  }
]

/** The simulator's faults: the first five are seen before the service sends a byte; the last three after, for a stream. */
const faults = [
  "ignore_stream", // 200 application/json to a stream
  "html_page", // 200 text/html
  "gzip", // the answer gzip-encoded, unasked
  "bad_gateway", // 502 with an HTML page
  "reset", // the connection cut before the headers
  "cut_after_headers", // the connection cut after the headers
  "mid_stream_abort", // cut between two events (in the middle of a JSON body)
  "mid_event_abort" // cut in the middle of an event
] as const

const afterHeaders: ReadonlySet<string> = new Set(["cut_after_headers", "mid_stream_abort", "mid_event_abort"])

/** The error object of each format, whether it is a whole body or a stream's in-band event's data. */
const errorOf = (provider: Provider, body: any): { readonly type: unknown; readonly code: unknown; readonly message: unknown } =>
  provider === "provider_a"
    ? { type: body?.error?.type, code: body?.error?.code, message: body?.error?.message }
    : provider === "provider_b"
    ? { type: body?.type === "error" ? body?.error?.type : undefined, code: body?.error?.type, message: body?.error?.message }
    : { type: body?.object === "error" ? body?.type : undefined, code: body?.code, message: body?.message }

/** The type each format gives a 502. */
const serverErrorType: Record<Provider, string> = { provider_a: "server_error", provider_b: "api_error", provider_c: "server_error" }

/** The body as far as it came: a stream cut after its in-band error still shows it. */
const readToEnd = async (response: Response): Promise<string> => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) text += decoder.decode(read.value, { stream: true })
  } catch {
    // Cut after the in-band error, as the service does: what came is the answer.
  }
  return text
}

/** The last event of a stream's text: its name and parsed data. */
const lastEvent = (text: string): { readonly event: string | undefined; readonly data: unknown } => {
  const blocks = text.split("\n\n").filter((block) => block.trim() !== "")
  const last = blocks.at(-1) ?? ""
  const event = /^event: (.*)$/m.exec(last)?.[1]
  const data = /^data: (.*)$/m.exec(last)?.[1]
  let parsed: unknown
  try {
    parsed = data === undefined ? undefined : JSON.parse(data)
  } catch {
    parsed = undefined
  }
  return { event, data: parsed }
}

/** Limits no test here reaches. */
const roomy = Object.fromEntries(
  ["chat_completions", "embeddings", "messages", "fim"].map((family) => [family, { requestsPerMinute: 100_000, tokensPerMinute: 100_000_000 }])
)

interface Service {
  readonly base: string
  readonly process: ServiceProcess
  readonly key: string
}

/** The built service on the test PostgreSQL, the built-in simulator as every upstream, and a key of a roomy workspace. */
const startService = async (): Promise<Service> => {
  const port = String(await Effect.runPromise(freePort))
  const base = `http://127.0.0.1:${port}`
  const running = spawnService({
    DATA_DIR: tempDir("ws-upstream-faults-"),
    PORT: port,
    HOST: "127.0.0.1",
    ADMIN_TOKEN: adminToken,
    DATABASE_URL: await freshDatabaseUrl(),
    LOG_LEVEL: "warning"
  })
  await waitForOk(`${base}/readyz`, 90_000)
  const workspace = await (await fetch(`${base}/admin/workspaces`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ name: "Faults", settings: { rateLimits: { families: roomy } } })
  })).json() as { id: string }
  const { key } = await (await fetch(`${base}/admin/workspaces/${workspace.id}/api-keys`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ name: "faults", scopes: ["COMPLETION_API"] })
  })).json() as { key: string }
  return { base, process: running, key }
}

const stopService = async (service: Service | undefined) => {
  if (service === undefined || service.process.child.exitCode !== null) return
  service.process.child.kill("SIGTERM")
  await service.process.exited
}

const send = (service: Service, endpoint: Endpoint, said: string, stream: boolean) =>
  fetch(`${service.base}${endpoint.path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${service.key}`, "content-type": "application/json" },
    body: JSON.stringify(endpoint.body(said, stream))
  })

describe("no upstream answer ends the process (issue 25, finding 1)", () => {
  let service: Service | undefined

  beforeAll(async () => {
    service = await startService()
  }, 120_000)
  afterAll(async () => {
    await stopService(service)
  })

  const cases = endpoints.flatMap((endpoint) =>
    faults.flatMap((fault) => [
      ...(endpoint.streams ? [{ endpoint, fault, stream: true }] : []),
      ...(fault === "ignore_stream" ? [] : [{ endpoint, fault, stream: false }])
    ])
  )

  it.each(cases.map((c) => [c.endpoint.name, c.stream ? "stream" : "JSON", c.fault, c] as const))(
    "%s (%s), upstream fault %s: an error in the endpoint's format, then the next request is answered",
    async (_name, _kind, fault, { endpoint, stream }) => {
      const running = service!
      const response = await send(running, endpoint, `hello [simulator fault=${fault} fault_after=2]`, stream)
      const text = await readToEnd(response)
      if (stream && afterHeaders.has(fault)) {
        // Bytes went out: the status is the stream's, and it ends with the protocol's in-band error.
        expect(response.status).toBe(200)
        const { data, event } = lastEvent(text)
        if (endpoint.provider === "provider_b") expect(event).toBe("error")
        expect(errorOf(endpoint.provider, data)).toMatchObject({ type: serverErrorType[endpoint.provider], message: expect.any(String) })
      } else {
        expect(response.status, text).toBe(502)
        expect(response.headers.get("content-type")).toMatch(/application\/json/)
        const error = errorOf(endpoint.provider, JSON.parse(text))
        expect(error).toMatchObject({ type: serverErrorType[endpoint.provider], message: expect.any(String) })
        if (endpoint.provider !== "provider_b") expect(error.code).toMatch(/^upstream_/)
      }
      // The process is up and serves the same endpoint as usual.
      const next = await send(running, endpoint, "hello again", stream)
      const nextText = await readToEnd(next)
      expect(next.status, nextText).toBe(200)
      expect(running.process.child.exitCode).toBeNull()
    }
  )

  it("is still running, and never met an unhandled error", async () => {
    expect((await fetch(`${service!.base}/healthz`)).status).toBe(200)
    expect(service!.process.child.exitCode).toBeNull()
    expect(service!.process.output().stderr).not.toMatch(/Unhandled|UND_ERR/)
  })
})

describe("a stream still open at the end of the shutdown grace (issue 25, residue 9)", () => {
  let service: Service | undefined

  beforeAll(async () => {
    service = await startService()
  }, 120_000)
  afterAll(async () => {
    await stopService(service)
  })

  it("ends with the protocol's in-band error before the connection closes, for every provider", async () => {
    const running = service!
    // A hundred seconds of stream each: far beyond the 20 s grace.
    const streams = await Promise.all(endpoints.filter((endpoint) => endpoint.streams).map(async (endpoint) => {
      const response = await send(running, endpoint, "[simulator chunk_delay_ms=1000 chunk_tokens=1 output_tokens=100] go", true)
      expect(response.status).toBe(200)
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let text = decoder.decode((await reader.read()).value, { stream: true })
      // Read on, so that the client keeps the stream open until the service ends it.
      const ended = (async () => {
        try {
          for (let read = await reader.read(); !read.done; read = await reader.read()) text += decoder.decode(read.value, { stream: true })
        } catch {
          // Cut after the in-band error.
        }
        return text
      })()
      return { endpoint, ended }
    }))
    running.process.child.kill("SIGTERM")
    for (const { endpoint, ended } of streams) {
      const text = await ended
      const { data, event } = lastEvent(text)
      if (endpoint.provider === "provider_b") {
        expect(event, endpoint.name).toBe("error")
        expect(data, endpoint.name).toMatchObject({ type: "error", error: { type: "overloaded_error", message: expect.stringMatching(/shutdown grace/) } })
      } else {
        expect(errorOf(endpoint.provider, data), endpoint.name).toMatchObject({ code: "service_stopping", message: expect.stringMatching(/shutdown grace/) })
      }
      // Events were relayed until then: the error ends a stream that was under way.
      expect(text.split("\n\n").length, endpoint.name).toBeGreaterThan(5)
    }
    expect(await running.process.exited).toBe(0)
  }, 90_000)
})
