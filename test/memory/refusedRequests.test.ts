import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type MemoryApp, startApp, call, createKey, createWorkspace } from "../support/app"

/**
 * The refused-request rule (docs/rate-limits.md): a forwarded request refused after authentication (a bad
 * field, a body that is not JSON, an unknown model) spends a request of its family's budget, so a
 * workspace allowed 3 requests a minute gets 400 400 404 then 429. Both edges serve a request through
 * the same function (`Served.serveRequest`): the forwarding lane and the HttpApi app must give the same
 * sequence, on every forwarded endpoint.
 */
const endpoints: ReadonlyArray<{
  readonly path: string
  readonly family: string
  /** Three refused bodies (each for another reason) with their status, then one the endpoint would serve. */
  readonly refused: ReadonlyArray<readonly [body: string, status: number]>
  readonly valid: unknown
}> = [
  {
    path: "/provider_a/eu/v1/chat/completions",
    family: "chat_completions",
    refused: [
      [JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }], temperature: 7 }), 400],
      ["{ not json", 400],
      [JSON.stringify({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }), 404]
    ],
    valid: { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] }
  },
  {
    path: "/provider_a/eu/v1/embeddings",
    family: "embeddings",
    refused: [[JSON.stringify({ model: "text-embedding-ada-002" }), 400], ["{ not json", 400], [JSON.stringify({ model: "no-such-model", input: "hi" }), 404]],
    valid: { model: "text-embedding-ada-002", input: "hi" }
  },
  {
    path: "/provider_b/eu/v1/messages",
    family: "messages",
    refused: [
      [JSON.stringify({ model: "assistantmodel-sonnet-4-5-20250929", messages: [{ role: "user", content: "hi" }] }), 400],
      ["{ not json", 400],
      [JSON.stringify({ model: "no-such-model", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }), 404]
    ],
    valid: { model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }
  },
  {
    path: "/provider_c/eu/v1/fim/completions",
    family: "fim",
    refused: [[JSON.stringify({ model: "codemodel-2501" }), 400], ["{ not json", 400], [JSON.stringify({ model: "no-such-model", prompt: "def" }), 400]],
    valid: { model: "codemodel-2501", prompt: "def" }
  }
]

describe.each([
  ["the forwarding lane", true],
  ["the HttpApi app", false]
] as const)("refused requests on %s", (_edge, forwardingLane) => {
  let app: MemoryApp
  beforeAll(async () => {
    app = await startApp({}, { forwardingLane })
  })
  afterAll(async () => {
    await app?.stop()
  })

  for (const endpoint of endpoints) {
    it(`${endpoint.path}: spend the family's request budget (${endpoint.refused.map(([, status]) => status).join(" ")} then 429)`, async () => {
      const workspace = await createWorkspace(app, `Limited ${endpoint.family}`, {
        rateLimits: { families: { [endpoint.family]: { requestsPerMinute: 3, tokensPerMinute: 1_000_000 } } }
      })
      const { key } = await createKey(app, workspace.id, ["COMPLETION_API"])
      const statuses: Array<number> = []
      for (const [body] of endpoint.refused) statuses.push((await call(app, "POST", endpoint.path, { token: key, body })).status)
      const next = await call(app, "POST", endpoint.path, { token: key, body: endpoint.valid })
      statuses.push(next.status)
      expect(statuses).toEqual([...endpoint.refused.map(([, status]) => status), 429])
      expect(Number(next.headers.get("retry-after"))).toBeGreaterThan(0)
    })
  }

  it("a request refused before authentication (no key) spends nothing", async () => {
    const workspace = await createWorkspace(app, "Unauthenticated", {
      rateLimits: { families: { chat_completions: { requestsPerMinute: 1, tokensPerMinute: 1_000_000 } } }
    })
    const { key } = await createKey(app, workspace.id, ["COMPLETION_API"])
    for (let i = 0; i < 3; i++) {
      expect((await call(app, "POST", "/provider_a/eu/v1/chat/completions", { body: endpoints[0]!.valid })).status).toBe(401)
    }
    expect((await call(app, "POST", "/provider_a/eu/v1/chat/completions", { token: key, body: endpoints[0]!.valid })).status).toBe(200)
  })
})
