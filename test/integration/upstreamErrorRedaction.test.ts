import ProviderBClient from "@anthropic-ai/sdk"
import { Mistral as ProviderCClient } from "@mistralai/mistralai"
import { randomBytes } from "node:crypto"
import type { ServerResponse } from "node:http"
import ProviderAClient from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeUpstream, startFakeUpstream } from "../support/fakeUpstream"
import { call, createKey, createWorkspace, type RunningApp, startApp, testAdminToken } from "../support/app"

/**
 * Issue 24, finding 5: an upstream that puts the service's own key (or a workspace's) into every field of its
 * errors, at the 1,000th character of its message, base64-encoded, next to internal host names without a port,
 * and inside a stream's error event. Nothing of any of it may reach a client: checked on the raw answers and
 * through each official client library's error object.
 */

/** Random keys, so that no run of eight of their characters can be in an answer by chance. */
const secret = (prefix: string) => `${prefix}-${randomBytes(24).toString("base64url")}`
const serviceKeys = { a: secret("sk-svc-a"), b: secret("sk-svc-b"), c: secret("svc-c") }
const workspaceKey = secret("sk-own-a")
const internalHosts = ["llm-proxy.prod.svc.cluster.local", "ip-10-0-3-7.eu-west-1.compute.internal"]

/** Every run of eight characters of a secret, and the middle of its base64 (either alphabet): none may appear. */
const leaksOf = (text: string, secrets: ReadonlyArray<string>): Array<string> =>
  secrets.flatMap((key) => {
    const pieces = Array.from({ length: key.length - 7 }, (_, i) => key.slice(i, i + 8))
    const encoded = [Buffer.from(`Bearer ${key}`).toString("base64"), Buffer.from(key).toString("base64url")].map((e) => e.slice(12, -12))
    return [...pieces, ...encoded].filter((piece) => text.includes(piece))
  }).concat(internalHosts.filter((host) => text.includes(host) || text.includes(host.split(".")[0]!)))

const allSecrets = [...Object.values(serviceKeys), workspaceKey]

/** What the upstream says about the key it was sent: the key itself, in every way it can. */
const hostileWords = (key: string) => ({
  /** The key straddling the 1,000th character of the message. */
  cut: `${"x".repeat(995)}${key} was refused`,
  encoded: `Auth ${Buffer.from(`Bearer ${key}`).toString("base64")} / ${Buffer.from(key).toString("base64url")} refused by ` +
    `${internalHosts[0]} (upstream ${internalHosts[1]})`,
  plain: `key ${key} refused at ${internalHosts[0]}`
})

type Words = keyof ReturnType<typeof hostileWords>

/** The error body of each provider's upstream, with the key in every field the format has. */
const errorBody = (path: string, key: string, words: Words) => {
  const message = hostileWords(key)[words]
  if (path.endsWith("/v1/messages")) return { type: "error", error: { type: key, message } }
  if (path.endsWith("/v1/fim/completions")) return { object: "error", message, type: key, param: key, code: key }
  return { error: { message, type: "invalid_request_error", param: key, code: key } }
}

/** The in-band error of each provider's stream, after one valid event. */
const streamWithError = (path: string, key: string, response: ServerResponse) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  const message = hostileWords(key).encoded + ` ${key}`
  if (path.endsWith("/v1/messages")) {
    response.write(`event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "m", type: "message", role: "assistant", content: [], model: "assistantmodel-sonnet-4-5-20250929", usage: { input_tokens: 3, output_tokens: 0 } } })}\n\n`)
    return response.end(`event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message } })}\n\n`)
  }
  const chunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "a" }, finish_reason: null }] }
  response.write(`data: ${JSON.stringify(chunk)}\n\n`)
  if (path.endsWith("/v1/fim/completions")) {
    return response.end(`data: ${JSON.stringify({ object: "error", message, type: key, param: key, code: key })}\n\n`)
  }
  return response.end(`data: ${JSON.stringify({ error: { message, type: key, param: key, code: key } })}\n\n`)
}

/** The body as far as it came: a stream cut after its in-band error still shows the error. */
const readToEnd = async (response: Response): Promise<string> => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) text += decoder.decode(read.value, { stream: true })
  } catch {
    // Cut: what came before is the answer.
  }
  return text
}

const lastText = (body: any): string =>
  typeof body?.prompt === "string" ? body.prompt : String(body?.messages?.at(-1)?.content ?? "")

describe("no secret in any relayed field of an upstream error (issue 24, finding 5)", () => {
  let upstream: FakeUpstream
  let app: RunningApp
  let key = ""
  let byokKey = ""

  beforeAll(async () => {
    upstream = await startFakeUpstream((request, response) => {
      // The credential the service sent: its own, or the workspace's.
      const sent = String(request.headers.authorization ?? request.headers["x-api-key"] ?? "").replace(/^Bearer /, "")
      if (request.path.endsWith("/v1/models")) {
        response.writeHead(200, { "content-type": "application/json" })
        return response.end(JSON.stringify({ object: "list", data: [] }))
      }
      const said = lastText(request.body)
      if (said === "stream") return streamWithError(request.path, sent, response)
      if (said === "detail") {
        // The FIM upstream's validation shape: the key as the field, the message and the type.
        response.writeHead(422, { "content-type": "application/json" })
        return response.end(JSON.stringify({ detail: [{ loc: ["body", sent], msg: hostileWords(sent).plain, type: sent }] }))
      }
      response.writeHead(400, { "content-type": "application/json" })
      response.end(JSON.stringify(errorBody(request.path, sent, said as Words)))
    })
    app = await startApp({
      CREDENTIALS_KEY: Buffer.alloc(32, 7).toString("base64"),
      UPSTREAM_PROVIDER_A_EU_URL: upstream.url,
      UPSTREAM_PROVIDER_A_EU_KEY: serviceKeys.a,
      UPSTREAM_PROVIDER_B_EU_URL: upstream.url,
      UPSTREAM_PROVIDER_B_EU_KEY: serviceKeys.b,
      UPSTREAM_PROVIDER_C_EU_URL: upstream.url,
      UPSTREAM_PROVIDER_C_EU_KEY: serviceKeys.c
    })
    const workspace = await createWorkspace(app)
    key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
    const byok = await createWorkspace(app, "Own keys")
    const saved = await call(app, "PUT", `/admin/workspaces/${byok.id}/provider-keys/provider_a`, {
      token: testAdminToken,
      body: { apiKey: workspaceKey }
    })
    expect(saved.status).toBe(200)
    byokKey = (await createKey(app, byok.id, ["COMPLETION_API"])).key
  })
  afterAll(async () => {
    await app?.stop()
    await upstream?.close()
  })

  const requests = {
    provider_a: (content: string, stream: boolean) => ({
      path: "/provider_a/eu/v1/chat/completions",
      body: { model: "chatgen-4o", messages: [{ role: "user", content }], stream }
    }),
    provider_b: (content: string, stream: boolean) => ({
      path: "/provider_b/eu/v1/messages",
      body: { model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 16, messages: [{ role: "user", content }], stream }
    }),
    provider_c: (content: string, stream: boolean) => ({
      path: "/provider_c/eu/v1/fim/completions",
      body: { model: "codemodel-2501", prompt: content, stream }
    })
  }

  const raw = async (provider: keyof typeof requests, said: string, stream = false, apiKey = key) => {
    const { body, path } = requests[provider](said, stream)
    const response = await fetch(`${app.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: response.status, text: await readToEnd(response) }
  }

  const providers = Object.keys(requests) as Array<keyof typeof requests>

  it.each(providers.flatMap((provider) => (["cut", "encoded", "plain"] as const).map((words) => [provider, words] as const)))(
    "%s: a 400 with the key in its fields (%s) reaches the client without it",
    async (provider, words) => {
      const { status, text } = await raw(provider, words)
      expect(status).toBe(400)
      expect(leaksOf(text, allSecrets)).toEqual([])
      const body = JSON.parse(text)
      const error = body.error ?? body
      // The upstream's words are relayed, redacted: a refusal the caller can read.
      expect(error.message).toMatch(words === "cut" ? /^x{995}\[reda/ : /refused/)
      expect(error.message.length).toBeLessThanOrEqual(1_001)
      if (provider !== "provider_b") {
        expect(error.code).toBe("upstream_error")
        expect(error.param).toBeNull()
      }
    }
  )

  it("provider_c: a validation error naming the key as its field, message and type", async () => {
    const { status, text } = await raw("provider_c", "detail")
    expect(status).toBe(422)
    expect(leaksOf(text, allSecrets)).toEqual([])
    expect(JSON.parse(text)).toMatchObject({ object: "error", param: null, code: "upstream_error" })
  })

  it.each(providers)("%s: a stream's error event reaches the client without the key", async (provider) => {
    const { status, text } = await raw(provider, "stream", true)
    expect(status).toBe(200)
    expect(leaksOf(text, allSecrets)).toEqual([])
    // The stream ends with the protocol's in-band error, not as if it were complete.
    expect(text).toMatch(provider === "provider_b" ? /event: error\ndata: \{"type":"error"/ : /data: \{"(error|object)"/)
    expect(text).not.toContain("[DONE]")
  })

  it("a workspace's own key echoed by the upstream is redacted like the service's", async () => {
    for (const words of ["cut", "encoded", "plain"] as const) {
      const { status, text } = await raw("provider_a", words, false, byokKey)
      expect(status).toBe(400)
      expect(leaksOf(text, allSecrets), words).toEqual([])
    }
    const streamed = await raw("provider_a", "stream", true, byokKey)
    expect(leaksOf(streamed.text, allSecrets)).toEqual([])
  })

  /** Everything a client library's error object exposes, as text. */
  const exposed = (error: unknown): string => {
    const fields = error as Record<string, unknown>
    return [String(error), JSON.stringify(fields), fields.message, fields.code, fields.param, fields.body, JSON.stringify(fields.error)].join("\n")
  }
  const rejection = async (run: () => Promise<unknown>): Promise<unknown> => {
    try {
      await run()
    } catch (error) {
      return error
    }
    throw new Error("expected the call to fail")
  }

  it("through the official client libraries: their error objects hold none of it", async () => {
    const a = new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 })
    const ownA = new ProviderAClient({ apiKey: byokKey, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 })
    const b = new ProviderBClient({ apiKey: key, baseURL: `${app.url}/provider_b/eu`, maxRetries: 0 })
    const c = new ProviderCClient({ apiKey: key, serverURL: `${app.url}/provider_c/eu` })
    for (const words of ["cut", "encoded", "plain"] as const) {
      for (const client of [a, ownA]) {
        const error = await rejection(() => client.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: words }] }))
        expect(error).toBeInstanceOf(ProviderAClient.BadRequestError)
        expect((error as InstanceType<typeof ProviderAClient.BadRequestError>).param).toBeNull()
        expect(leaksOf(exposed(error), allSecrets), words).toEqual([])
      }
      const fromB = await rejection(() =>
        b.messages.create({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 16, messages: [{ role: "user", content: words }] })
      )
      expect(fromB).toBeInstanceOf(ProviderBClient.BadRequestError)
      expect(leaksOf(exposed(fromB), allSecrets), words).toEqual([])
      const fromC = await rejection(() => c.fim.complete({ model: "codemodel-2501", prompt: words }))
      expect(leaksOf(exposed(fromC), allSecrets), words).toEqual([])
    }
    // Streams: the in-band error as each library raises it.
    const streamA = await rejection(async () => {
      for await (const _ of await a.chat.completions.create({ model: "chatgen-4o", stream: true, messages: [{ role: "user", content: "stream" }] })) {
        // read to the error
      }
    })
    expect(streamA).toBeInstanceOf(ProviderAClient.APIError)
    expect(leaksOf(exposed(streamA), allSecrets)).toEqual([])
    const streamB = await rejection(async () => {
      const stream = await b.messages.create({
        model: "assistantmodel-sonnet-4-5-20250929",
        max_tokens: 16,
        stream: true,
        messages: [{ role: "user", content: "stream" }]
      })
      for await (const _ of stream) {
        // read to the error
      }
    })
    expect(streamB).toBeInstanceOf(ProviderBClient.APIError)
    expect((streamB as InstanceType<typeof ProviderBClient.APIError>).message).toContain("[redacted]")
    expect(leaksOf(exposed(streamB), allSecrets)).toEqual([])
    const streamC = await rejection(async () => {
      for await (const _ of await c.fim.stream({ model: "codemodel-2501", prompt: "stream" })) {
        // read to the error
      }
    })
    expect(leaksOf(exposed(streamC), allSecrets)).toEqual([])
  })
})
