import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { maxJsonDepth } from "../../src/domain/jsonDepth"
import { type MemoryApp, startApp, call, createKey, createWorkspace, testAdminToken } from "../support/app"

/** JSON text of `levels` arrays nested in one another: built as text (JSON.stringify of such a value overflows). */
const deep = (levels: number): string => "[".repeat(levels) + "]".repeat(levels)

const unbound = { requestsPerMinute: 100_000, tokensPerMinute: 1_000_000_000 }

// Bodies nested too deep anywhere, and bodies of megabytes, on the whole service (in memory, built-in simulator),
// through the forwarding lane and through the HttpApi app alike.
describe.each([
  { path: "the forwarding lane", lane: true },
  { path: "the HttpApi app", lane: false }
])("request bodies through $path", ({ lane }) => {
  let app: MemoryApp
  let key = ""

  beforeAll(async () => {
    app = await startApp({}, { forwardingLane: lane })
    const workspace = await createWorkspace(app, "Bodies", {
      rateLimits: { families: { chat_completions: unbound, embeddings: unbound, messages: unbound, fim: unbound } }
    })
    key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
  })
  afterAll(async () => {
    await app?.stop()
  })

  const post = (route: string, body: string, headers: Record<string, string> = {}) => call(app, "POST", route, { token: key, body, headers })

  it("refuses JSON nested 5,000 deep in any field of a forwarded body with a 400 naming it, in the endpoint's format", async () => {
    const chat = await post("/provider_a/eu/v1/chat/completions", `{"model":"chatgen-4o","messages":[{"role":"user","content":"hi"}],"metadata":${deep(5_000)}}`)
    expect(chat.status).toBe(400)
    expect(chat.body.error).toMatchObject({ type: "invalid_request_error", param: "metadata[0][0][0][0][0]", code: "invalid_value" })
    const functionTool = await post(
      "/provider_a/eu/v1/chat/completions",
      `{"model":"chatgen-4o","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":${
        deep(5_000)
      }}}}}]}`
    )
    expect(functionTool.status).toBe(400)
    expect(functionTool.body.error.param).toBe("tools[0].function.parameters.properties.x")
    const messagesTool = await post(
      "/provider_b/eu/v1/messages",
      `{"model":"assistantmodel-sonnet-4-5-20250929","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","input_schema":{"type":"object","properties":${
        deep(5_000)
      }}}]}`
    )
    expect(messagesTool.status).toBe(400)
    expect(messagesTool.body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } })
    expect(messagesTool.body.error.message).toMatch(new RegExp(`^tools\\[0\\]\\.input_schema\\.properties\\[0\\]\\[0\\]: nested more than ${maxJsonDepth} levels deep`))
    const metadata = await post(
      "/provider_b/eu/v1/messages",
      `{"model":"assistantmodel-sonnet-4-5-20250929","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"metadata":{"user_id":${deep(5_000)}}}`
    )
    expect(metadata.status).toBe(400)
    expect(metadata.body.error.message).toMatch(/^metadata\.user_id\[0\]/)
    const counted = await post("/provider_b/eu/v1/messages/count_tokens", `{"model":"assistantmodel-sonnet-4-5-20250929","messages":${deep(5_000)}}`)
    expect(counted.status).toBe(400)
    const fim = await post("/provider_c/eu/v1/fim/completions", `{"model":"codemodel-2501","prompt":"x","stop":${deep(5_000)}}`)
    expect(fim.status).toBe(400)
    expect(fim.body).toMatchObject({ object: "error", param: "stop[0][0][0][0][0]" })
    const embeddings = await post("/provider_a/eu/v1/embeddings", `{"model":"text-embedding-ada-002","input":${deep(5_000)}}`)
    expect(embeddings.status).toBe(400)
    expect(embeddings.body.error.param).toBe("input[0][0][0][0][0]")
    // Nested as deep as the bound allows: decoded, counted and forwarded as usual.
    const within = await post("/provider_a/eu/v1/chat/completions", `{"model":"chatgen-4o","messages":[{"role":"user","content":"hi"}],"metadata":${deep(maxJsonDepth - 1)}}`)
    expect(within.status).toBe(200)
  })

  it("refuses deep JSON in admin, console and export bodies with a 400 naming the field", async () => {
    const admin = await call(app, "POST", "/admin/workspaces", { token: testAdminToken, body: `{"name":"x","settings":{"byokModels":${deep(5_000)}}}` })
    expect(admin.status).toBe(400)
    expect(admin.body.error).toMatchObject({ code: "invalid_value", field: "settings.byokModels[0][0][0][0]" })
    const console = await call(app, "POST", "/console/api/session", { body: `{"email":${deep(5_000)},"password":"x"}`, headers: { origin: app.origin } })
    expect(console.status).toBe(400)
    expect(console.body.error.field).toBe("email[0][0][0][0][0]")
    const exported = await call(app, "POST", "/export/users", { token: key, body: `{"from":${deep(5_000)}}` })
    expect(exported.status).toBe(400)
    expect(exported.body).toMatchObject({ success: false, error: { field: "from[0][0][0][0][0]" } })
    // Nothing was created.
    const listed = await call(app, "GET", "/admin/workspaces", { token: testAdminToken })
    expect(listed.body.data.map((w: { name: string }) => w.name)).toEqual(["Bodies"])
  })

  it("refuses a 9 MB message that cannot fit the context at once, counted only past the context", async () => {
    const text = "hello world ".repeat(800_000)
    const chat = await post("/provider_a/eu/v1/chat/completions", JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: text }] }))
    expect(chat.status).toBe(400)
    expect(chat.body.error).toMatchObject({ code: "context_length_exceeded", param: "messages" })
    expect(chat.body.error.message).toMatch(/^messages: at least \d+ tokens, more than the model's context of 128000 tokens/)
    // An embeddings input longer than 8,192 tokens of 128 bytes each: refused on its length.
    const embeddings = await post("/provider_a/eu/v1/embeddings", JSON.stringify({ model: "text-embedding-ada-002", input: ["short", "x".repeat(8_192 * 128 + 1)] }))
    expect(embeddings.status).toBe(400)
    expect(embeddings.body.error).toMatchObject({ code: "context_length_exceeded", param: "input[1]" })
  })
})

describe("large bodies a few at a time", () => {
  let app: MemoryApp
  const keys: Array<string> = []

  beforeAll(async () => {
    app = await startApp()
    for (const name of ["flood", "other"]) {
      const workspace = await createWorkspace(app, name, { rateLimits: { families: { chat_completions: unbound } } })
      keys.push((await createKey(app, workspace.id, ["COMPLETION_API"])).key)
    }
  })
  afterAll(async () => {
    await app?.stop()
  })

  it("answers 8 concurrent 9 MB messages of one workspace, each refused in the chat format, and another workspace meanwhile", async () => {
    const body = JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "a".repeat(9 * 1024 * 1024) }] })
    const flood = Array.from({ length: 8 }, () => call(app, "POST", "/provider_a/eu/v1/chat/completions", { token: keys[0]!, body }))
    const other = await call(app, "POST", "/provider_a/eu/v1/chat/completions", {
      token: keys[1]!,
      body: { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] }
    })
    expect(other.status).toBe(200)
    const answers = await Promise.all(flood)
    // Four at most from one workspace read or in line at a time; those beyond refused at once, to retry shortly.
    const codes = answers.map((answer) => `${answer.status} ${answer.body.error.code}`)
    expect(new Set(codes)).toEqual(new Set(["400 context_length_exceeded", "429 too_many_large_bodies"]))
    const busy = answers.filter((answer) => answer.status === 429)
    expect(busy.length).toBeLessThanOrEqual(4)
    for (const answer of busy) expect(answer.headers.get("retry-after")).toBe("1")
  }, 60_000)
})
