/**
 * The served OpenAPI document's examples, sent as the docs page's "Try it out" sends them, on the
 * in-memory app with the simulator upstream: every forwarded example answers 200, the admin and export
 * examples work in a chain (a workspace, its activity, a key, the export of the period).
 */
import { OpenApi } from "@effect/platform"
import { beforeAll, describe, expect, it } from "vitest"
import { WorkspaceApi } from "../../src/api/Api"
import { useApp, call, createKey, createWorkspace, testAdminToken } from "../support/app"

type Json = { [key: string]: unknown }
const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const at = (value: unknown, ...keys: ReadonlyArray<string>): unknown =>
  keys.reduce<unknown>((inner, key) => (isJson(inner) ? inner[key] : undefined), value)

describe("the served OpenAPI document", () => {
  const app = useApp()
  let document: Json = {}
  beforeAll(async () => {
    document = (await call(app.current, "GET", "/openapi.json")).body as Json
  })
  const exampleOf = (method: string, path: string): unknown =>
    at(document, "paths", path, method, "requestBody", "content", "application/json", "example")

  it("is the generated document, refined, and the docs page is built from it", async () => {
    expect(document).toEqual(JSON.parse(JSON.stringify(OpenApi.fromApi(WorkspaceApi))))
    expect(Object.keys(at(document, "paths", "/healthz", "get", "responses") as Json)).toEqual(["200", "503"])
    const docs = await fetch(`${app.current.url}/docs`)
    expect(docs.status).toBe(200)
    expect(await docs.text()).toContain("swagger")
  })

  it("has forwarded examples that answer 200 in the first documented region", async () => {
    const workspace = await createWorkspace(app.current, "Try it out")
    const { key } = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    // The forwarded POSTs (the models lists under the same paths are GETs, tried in models.test.ts).
    const forwarded = Object.entries(at(document, "paths") as Json).filter(([path, item]) => path.includes("/{region}/") && "post" in (item as Json))
    expect(forwarded.length).toBeGreaterThanOrEqual(5)
    for (const [path, item] of forwarded) {
      const op = at(item, "post")
      const region = (at(op, "parameters") as ReadonlyArray<Json>).find((parameter) => parameter.name === "region")
      const [first] = at(region, "schema", "enum") as ReadonlyArray<string>
      const answer = await call(app.current, "POST", path.replace("{region}", first!), { token: key, body: exampleOf("post", path) })
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(200)
    }
  })

  it("refuses an unknown model with the service's own 404, not a schema's 400 (the enum documents)", async () => {
    const workspace = await createWorkspace(app.current, "Unknown model")
    const { key } = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    const path = "/provider_a/{region}/v1/chat/completions"
    const body = { ...(exampleOf("post", path) as Json), model: "chatgen-unknown" }
    const answer = await call(app.current, "POST", "/provider_a/eu/v1/chat/completions", { token: key, body })
    expect(answer.status).toBe(404)
    expect(answer.body.error).toMatchObject({ code: "model_not_found", param: "model" })
    expect(answer.body.error.message).toContain("chatgen-unknown")
  })

  it("has admin and export examples that work in a chain: workspace, activity, key, export of the period", async () => {
    const created = await call(app.current, "POST", "/admin/workspaces", { token: testAdminToken, body: exampleOf("post", "/admin/workspaces") })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const id = String(created.body.id)
    const ingested = await call(app.current, "POST", `/admin/workspaces/${id}/events`, {
      token: testAdminToken,
      body: exampleOf("post", "/admin/workspaces/{id}/events")
    })
    expect(ingested.status, JSON.stringify(ingested.body)).toBe(200)
    expect(ingested.body).toMatchObject({ accepted: 1 })
    const keyed = await call(app.current, "POST", `/admin/workspaces/${id}/api-keys`, {
      token: testAdminToken,
      body: exampleOf("post", "/admin/workspaces/{id}/api-keys")
    })
    expect(keyed.status, JSON.stringify(keyed.body)).toBe(201)
    const exported = await call(app.current, "POST", "/export/users", { token: String(keyed.body.key), body: exampleOf("post", "/export/users") })
    expect(exported.status, JSON.stringify(exported.body)).toBe(200)
    expect(exported.body.data.recordCount).toBeGreaterThanOrEqual(1)
  })
})
