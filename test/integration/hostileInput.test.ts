import { FastCheck as fc } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { call, createKey, createWorkspace, testAdminToken, useApp } from "../support/app"

/**
 * Random and mutated bodies against every public endpoint: whatever arrives, the answer is never a
 * 5xx and always an error body of the endpoint's own format that its client library can read.
 */

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type Format = "admin" | "exports" | "provider_a" | "provider_b" | "provider_c"

interface Target {
  readonly route: string
  readonly format: Format
  readonly valid: Json
}

const targets: ReadonlyArray<Target> = [
  {
    route: "/provider_a/eu/v1/chat/completions",
    format: "provider_a",
    valid: {
      model: "chatgen-4o-mini",
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: [{ type: "text", text: "hi" }] }],
      max_tokens: 5,
      stream: false,
      temperature: 0.5,
      stop: ["\n"],
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }],
      response_format: { type: "text" }
    }
  },
  {
    route: "/provider_a/us/v1/embeddings",
    format: "provider_a",
    valid: { model: "text-embedding-ada-002", input: ["one", "two"], encoding_format: "float" }
  },
  {
    route: "/provider_b/eu/v1/messages",
    format: "provider_b",
    valid: {
      model: "assistantmodel-sonnet-4-5-20250929",
      max_tokens: 5,
      stream: false,
      system: [{ type: "text", text: "Be brief." }],
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      tools: [{ name: "f", input_schema: { type: "object" } }],
      tool_choice: { type: "auto" },
      top_k: 3
    }
  },
  {
    route: "/provider_c/eu/v1/fim/completions",
    format: "provider_c",
    valid: { model: "codemodel-2501", prompt: "def f(", suffix: "\n", max_tokens: 5, stream: false, stop: ["\n\n"], random_seed: 1 }
  },
  {
    route: "/admin/workspaces",
    format: "admin",
    valid: { name: "Fuzzed too", settings: { anonymizeUsers: true, rateLimits: { families: { messages: { requestsPerMinute: 10, tokensPerMinute: 1000 } } } } }
  },
  {
    route: "/export/users",
    format: "exports",
    valid: { from: { date: "2026-01-01T00:00:00", timezone: "Europe/Paris" }, to: { date: "2026-01-02T00:00:00", timezone: "Europe/Paris" } }
  }
]

/** Every place in a JSON value, as a path of keys and indices. */
const pathsOf = (value: Json, prefix: ReadonlyArray<string | number> = []): Array<ReadonlyArray<string | number>> => {
  const here = prefix.length > 0 ? [prefix] : []
  if (Array.isArray(value)) return [...here, ...value.flatMap((item, index) => pathsOf(item, [...prefix, index]))]
  if (value !== null && typeof value === "object") {
    return [...here, ...Object.entries(value).flatMap(([key, item]) => pathsOf(item as Json, [...prefix, key]))]
  }
  return here
}

/** The value with the place at `path` replaced (or removed when `replacement` is undefined). */
const mutated = (value: Json, path: ReadonlyArray<string | number>, replacement: Json | undefined): Json => {
  const [head, ...rest] = path
  if (head === undefined) return replacement ?? null
  if (Array.isArray(value)) {
    const copy: Array<Json> = [...value]
    if (rest.length === 0 && replacement === undefined) copy.splice(head as number, 1)
    else copy[head as number] = mutated(copy[head as number] ?? null, rest, replacement)
    return copy
  }
  const record = { ...(value as Record<string, Json>) }
  if (rest.length === 0 && replacement === undefined) delete record[head as string]
  else record[head as string] = mutated(record[head as string] ?? null, rest, replacement)
  return record
}

/** A hostile body: a valid one with one place changed or removed, any JSON at all, or text that is no JSON. */
const hostileBody = (valid: Json): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...pathsOf(valid)), fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }))
      .map(([path, replacement]) => JSON.stringify(mutated(valid, path, replacement as Json | undefined))) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) }
  )

/** Mostly JSON; the others take the framework's path instead of the forwarding lane's. */
const contentTypes = fc.oneof(
  { weight: 6, arbitrary: fc.constant("application/json") },
  { weight: 1, arbitrary: fc.constantFrom("application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "") }
)

/** What the endpoint's client library reads from an error answer. */
const readableError = (format: Format, body: any): boolean => {
  switch (format) {
    case "admin":
      return typeof body?.error?.code === "string" && typeof body.error.message === "string"
    case "exports":
      return body?.success === false && typeof body.error?.code === "string" && typeof body.error.message === "string"
    case "provider_a":
      return typeof body?.error?.type === "string" && typeof body.error.message === "string"
    case "provider_b":
      return body?.type === "error" && typeof body.error?.type === "string" && typeof body.error.message === "string"
    case "provider_c":
      return (body?.object === "error" && typeof body.message === "string") || Array.isArray(body?.detail)
  }
}

describe("hostile input", () => {
  const app = useApp({}, { stores: "postgres" })
  let completionKey: string
  let exportKey: string

  beforeAll(async () => {
    const roomy = { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000 }
    const workspace = await createWorkspace(app.current, "Fuzzed", {
      rateLimits: {
        families: { chat_completions: roomy, embeddings: roomy, messages: roomy, fim: roomy, usage_export: roomy },
        models: { "chatgen-4o-mini": roomy, "assistantmodel-sonnet-4-5-20250929": roomy, "codemodel-2501": roomy }
      }
    })
    completionKey = (await createKey(app.current, workspace.id, ["COMPLETION_API"])).key
    exportKey = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
  })

  it("refuses bodies that once made the payload parser throw (found by the property below) with 400", async () => {
    const unreadable = { toString: 0 }
    const cases: ReadonlyArray<[string, unknown]> = [
      ["/provider_b/eu/v1/messages", { model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 5, messages: [{ role: "user", content: "hi" }], tool_choice: { type: unreadable } }],
      ["/provider_b/eu/v1/messages", { model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 5, messages: [{ role: "user", content: [{ type: unreadable }] }] }],
      ["/provider_a/eu/v1/chat/completions", { model: "chatgen-4o-mini", messages: [{ role: "user", content: [{ type: unreadable, text: "hi" }] }] }]
    ]
    for (const [route, body] of cases) {
      const answer = await call(app.current, "POST", route, { token: completionKey, body })
      expect(answer.status, JSON.stringify(body)).toBe(400)
      expect(readableError(route.startsWith("/provider_b") ? "provider_b" : "provider_a", answer.body)).toBe(true)
    }
  })

  for (const target of targets) {
    it(`${target.route}: never a 5xx, always an error body of its format`, async () => {
      const token = target.format === "admin" ? testAdminToken : target.format === "exports" ? exportKey : completionKey
      const valid = await call(app.current, "POST", target.route, { token, body: target.valid })
      expect([200, 201, 404], JSON.stringify(valid.body)).toContain(valid.status)

      await fc.assert(
        fc.asyncProperty(hostileBody(target.valid), contentTypes, async (body, contentType) => {
          const answer = await call(app.current, "POST", target.route, { token, body, headers: { "content-type": contentType } })
          const context = `${answer.status} for ${contentType}: ${body.slice(0, 300)} → ${JSON.stringify(answer.body).slice(0, 300)}`
          expect(answer.status, context).toBeLessThan(500)
          if (answer.status >= 400) expect(readableError(target.format, answer.body), context).toBe(true)
        }),
        { numRuns: 300 }
      )
    }, 120_000)
  }
})
