/**
 * The OpenAPI document as a client generator reads it: valid OpenAPI 3.1 (a maintained validator, every
 * rule an error), each operation with only its own answers in its family's format, working examples,
 * the catalog's models and the providers' regions as enums, a summary, a description and a tag each.
 */
import { HttpApi, HttpApiSchema, OpenApi } from "@effect/platform"
import { validate } from "@readme/openapi-parser"
import { Context, Either, Option, Schema, SchemaAST } from "effect"
import { describe, expect, it } from "vitest"
import { WorkspaceApi } from "../../../src/api/Api"
import { adminErrorSchema } from "../../../src/api/errors/adminError"
import { consoleErrorSchema } from "../../../src/api/errors/consoleError"
import { exportErrorSchema } from "../../../src/api/errors/exportError"
import { exportRequestExample } from "../../../src/api/exportsApi"
import { RequestExample } from "../../../src/api/openapi/annotations"
import { componentName, errorFormatsByComponent } from "../../../src/api/openapi/errorExamples"
import { families } from "../../../src/api/openapi/families"
import { UsageExportRequest } from "../../../src/api/schemas/usageExport"
import { resolveDateRange } from "../../../src/domain/datePoint"
import { builtInCatalog, isKnownModel, type ModelFamily } from "../../../src/domain/models"
import type { ProviderId } from "../../../src/domain/providerId"
import { providerAErrorSchema } from "../../../src/providers/providerA/error"
import { chatCompletions, embeddings } from "../../../src/providers/providerA/endpoints"
import { ProviderAErrorBody } from "../../../src/providers/providerA/chatCompletionsWire"
import { providerBErrorSchema } from "../../../src/providers/providerB/error"
import { messages } from "../../../src/providers/providerB/endpoints"
import { providerCErrorSchema } from "../../../src/providers/providerC/error"
import { fimCompletions } from "../../../src/providers/providerC/endpoints"

type Json = { [key: string]: unknown }
const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const at = (value: unknown, ...keys: ReadonlyArray<string>): unknown =>
  keys.reduce<unknown>((inner, key) => (isJson(inner) ? inner[key] : undefined), value)

const spec = OpenApi.fromApi(WorkspaceApi) as unknown as Json
const operations: ReadonlyArray<{ readonly path: string; readonly method: string; readonly operation: Json }> = Object.entries(
  at(spec, "paths") as Json
).flatMap(([path, item]) => Object.entries(item as Json).map(([method, operation]) => ({ path, method, operation: operation as Json })))
const operation = (method: string, path: string): Json => {
  const found = operations.find((o) => o.method === method && o.path === path)
  if (found === undefined) throw new Error(`no operation ${method} ${path}`)
  return found.operation
}
const errorStatusesOf = (op: Json) => Object.keys(op.responses as Json).filter((status) => !status.startsWith("2"))
const ref = (name: string) => `#/components/schemas/${name}`

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1 for a maintained validator, every rule an error", async () => {
    const result = await validate(structuredClone(spec) as unknown as Parameters<typeof validate>[0])
    expect(result).toMatchObject({ valid: true, warnings: [] })
    expect(spec.openapi).toBe("3.1.0")
  })

  it("gives /healthz and /readyz 200 and 503 only", () => {
    expect(Object.keys(operation("get", "/healthz").responses as Json)).toEqual(["200", "503"])
    expect(Object.keys(operation("get", "/readyz").responses as Json)).toEqual(["200", "503"])
  })

  it("never shows HttpApi's decode error: decode failures are answered in each family's format", () => {
    const text = JSON.stringify(spec)
    expect(text).not.toContain("HttpApiDecodeError")
    expect(Object.keys(at(spec, "components", "schemas") as Json)).not.toContain("Issue")
  })

  it("gives every operation a summary, a description and one tag of its family, described once", () => {
    const tags = spec.tags as ReadonlyArray<Json>
    const familyNames = Object.values(families).map((family) => family.name)
    expect(tags.map((tag) => tag.name).sort()).toEqual([...familyNames].sort())
    for (const tag of tags) expect(tag.description, String(tag.name)).toEqual(expect.any(String))
    for (const { method, operation: op, path } of operations) {
      const name = `${method} ${path}`
      expect(op.summary, name).toEqual(expect.stringMatching(/\S/))
      expect(op.description, name).toEqual(expect.stringMatching(/\S/))
      expect(op.tags, name).toEqual([expect.any(String)])
      expect(familyNames, name).toContain((op.tags as ReadonlyArray<string>)[0])
    }
    expect(operation("post", "/provider_a/{region}/v1/chat/completions").tags).toEqual(["chat completions"])
    expect(operation("post", "/provider_a/{region}/v1/embeddings").tags).toEqual(["embeddings"])
    expect(operation("post", "/provider_a/{region}/v1/responses").tags).toEqual(["responses"])
    expect(operation("post", "/provider_b/{region}/v1/messages").tags).toEqual(["messages"])
    expect(operation("post", "/provider_c/{region}/v1/fim/completions").tags).toEqual(["FIM"])
    expect(operation("get", "/downloads/{folder}/{workspaceId}/{file}").tags).toEqual(["usage exports"])
    expect(operation("post", "/console/api/session").tags).toEqual(["console"])
  })

  it("answers each operation's errors in one format, its family's, each with an example in it", () => {
    const formatOfTag: Record<string, string> = {
      "chat completions": ref("ProviderAErrorBody"),
      embeddings: ref("ProviderAErrorBody"),
      responses: ref("ProviderAErrorBody"),
      messages: ref("ProviderBErrorBody"),
      FIM: ref("ProviderCErrorBody"),
      "usage exports": ref("UsageExportErrorBody"),
      admin: ref("AdminErrorBody"),
      console: ref("ConsoleErrorBody"),
      health: ref("NotReady")
    }
    for (const { method, operation: op, path } of operations) {
      const expected = formatOfTag[(op.tags as ReadonlyArray<string>)[0]!]
      for (const status of errorStatusesOf(op)) {
        const media = at(op, "responses", status, "content", "application/json")
        const name = `${method} ${path} ${status}`
        expect(at(media, "schema"), name).toEqual({ $ref: expected })
        const format = errorFormatsByComponent.get(expected!.slice(ref("").length))
        if (format === undefined) continue
        expect(Either.isRight(Schema.decodeUnknownEither(format.wire)(at(media, "example"))), name).toBe(true)
      }
    }
  })

  it("shows the chat completions' 401 in the chat-completions error format", () => {
    const unauthorized = at(operation("post", "/provider_a/{region}/v1/chat/completions"), "responses", "401", "content", "application/json")
    expect(at(unauthorized, "schema")).toEqual({ $ref: ref("ProviderAErrorBody") })
    const example = Schema.decodeUnknownSync(ProviderAErrorBody)(at(unauthorized, "example"))
    expect(example.error).toMatchObject({ type: "authentication_error", code: "invalid_api_key" })
    expect(at(unauthorized, "example")).not.toHaveProperty("success")
  })

  it("lists only what each operation answers: no 22 statuses, no body statuses without a body", () => {
    expect(errorStatusesOf(operation("post", "/provider_a/{region}/v1/chat/completions"))).toEqual(
      ["400", "401", "403", "404", "413", "415", "429", "502", "503", "504", "4XX"]
    )
    // 529: the messages protocol's "overloaded", passed on to its clients.
    expect(errorStatusesOf(operation("post", "/provider_b/{region}/v1/messages"))).toContain("529")
    expect(errorStatusesOf(operation("post", "/provider_a/{region}/v1/chat/completions"))).not.toContain("529")
    expect(errorStatusesOf(operation("post", "/export/users"))).toEqual(["400", "401", "404", "413", "415", "429", "500", "503"])
    expect(errorStatusesOf(operation("get", "/downloads/{folder}/{workspaceId}/{file}"))).toEqual(["403", "404", "500"])
    expect(errorStatusesOf(operation("get", "/admin/workspaces/{id}"))).toEqual(["401", "404", "429", "503"])
    for (const { method, operation: op, path } of operations) {
      if (op.requestBody === undefined) expect(errorStatusesOf(op), `${method} ${path}`).not.toContain("415")
      expect(errorStatusesOf(op).length, `${method} ${path}`).toBeLessThan(13)
    }
  })

  it("documents only statuses the service's one error encoder can write in that format", () => {
    const statusesOf = (schema: Schema.Schema.Any) => {
      const members = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> => SchemaAST.isUnion(ast) ? ast.types.flatMap(members) : [ast]
      return new Set(members(schema.ast).map((member) => String(HttpApiSchema.getStatusErrorAST(member))))
    }
    const encodable: Record<string, ReadonlySet<string>> = {
      [ref("UsageExportErrorBody")]: statusesOf(exportErrorSchema),
      [ref("ProviderAErrorBody")]: statusesOf(providerAErrorSchema),
      [ref("ProviderBErrorBody")]: statusesOf(providerBErrorSchema),
      [ref("ProviderCErrorBody")]: statusesOf(providerCErrorSchema),
      [ref("AdminErrorBody")]: statusesOf(adminErrorSchema),
      [ref("ConsoleErrorBody")]: statusesOf(consoleErrorSchema),
      [ref("NotReady")]: new Set(["503"])
    }
    for (const { method, operation: op, path } of operations) {
      for (const status of errorStatusesOf(op).filter((s) => s !== "4XX")) {
        const component = String(at(op, "responses", status, "content", "application/json", "schema", "$ref"))
        expect(encodable[component]?.has(status), `${method} ${path} ${status} ${component}`).toBe(true)
      }
    }
  })

  describe("forwarded endpoints", () => {
    interface Forwarded {
      readonly name: string
      readonly provider: { readonly id: ProviderId; readonly regions: ReadonlyArray<string> }
      readonly path: string
      readonly family: string
      readonly payload: Schema.Schema.AnyNoContext
    }
    const forwarded: ReadonlyArray<Forwarded> = [chatCompletions, embeddings, messages, fimCompletions]
    const modelFamily = (family: string): ModelFamily => family as ModelFamily

    it("take the providers' regions and their family's catalog models as enums", () => {
      for (const endpoint of forwarded) {
        const op = operation("post", `/${endpoint.provider.id}/{region}${endpoint.path}`)
        const region = (op.parameters as ReadonlyArray<Json>).find((parameter) => parameter.name === "region")
        expect(at(region, "schema", "enum"), endpoint.name).toEqual(endpoint.provider.regions)
        const body = at(spec, "components", "schemas", String(at(op, "requestBody", "content", "application/json", "schema", "$ref")).slice(ref("").length))
        const model = at(body, "properties", "model") as Json
        const documented = Array.isArray(model.anyOf) ? (model.anyOf as ReadonlyArray<Json>).find((m) => m.type === "string")?.enum : model.enum
        const catalog = builtInCatalog.ids(endpoint.provider.id, modelFamily(endpoint.family))
        expect(catalog.length, endpoint.name).toBeGreaterThan(0)
        expect(documented, endpoint.name).toEqual(catalog)
      }
      const fimRegion = (operation("post", "/provider_c/{region}/v1/fim/completions").parameters as ReadonlyArray<Json>)[0]
      expect(at(fimRegion, "schema", "enum")).toEqual(["eu"])
    })

    it("keep the model enum documentation only: an unknown model still decodes, for the service's own check", () => {
      for (const endpoint of forwarded) {
        const example = at(operation("post", `/${endpoint.provider.id}/{region}${endpoint.path}`), "requestBody", "content", "application/json", "example")
        const unknownModel = Schema.decodeUnknownEither(endpoint.payload)({ ...(example as Json), model: "chatgen-unknown" })
        expect(Either.isRight(unknownModel), endpoint.name).toBe(true)
      }
    })

    it("give examples with a model of the family's catalog, the first region", () => {
      for (const endpoint of forwarded) {
        const example = at(operation("post", `/${endpoint.provider.id}/{region}${endpoint.path}`), "requestBody", "content", "application/json", "example")
        expect(isKnownModel(builtInCatalog, endpoint.provider.id, modelFamily(endpoint.family), String(at(example, "model"))), endpoint.name).toBe(true)
      }
    })
  })

  it("gives every request body an example its endpoint decodes", () => {
    const examples = new Map<string, unknown>()
    HttpApi.reflect(WorkspaceApi, {
      onGroup: () => {},
      onEndpoint: ({ endpoint, mergedAnnotations }) => {
        if (Option.isNone(endpoint.payloadSchema) || endpoint.method === "GET") return
        const name = `${endpoint.method} ${endpoint.path}`
        const example = Context.getOption(mergedAnnotations, RequestExample)
        expect(Option.isSome(example), name).toBe(true)
        if (Option.isNone(example)) return
        const decoded = Schema.decodeUnknownEither(endpoint.payloadSchema.value)(example.value)
        expect(decoded, name).toEqual(expect.objectContaining({ _tag: "Right" }))
        examples.set(name, example.value)
      }
    })
    // rotateCredentials takes no body; every other POST, PUT and PATCH does.
    expect(examples.size).toBe(
      operations.filter(({ operation: op }) => op.requestBody !== undefined).length
    )
    for (const { method, operation: op, path } of operations) {
      if (op.requestBody === undefined) continue
      expect(at(op, "requestBody", "content", "application/json", "example"), `${method} ${path}`).toBeDefined()
    }
  })

  it("gives the exports a valid period: from before to", () => {
    const request = Schema.decodeUnknownSync(UsageExportRequest)(exportRequestExample)
    // The export's own rule: both points resolve, from strictly before to.
    expect(Either.isRight(resolveDateRange(request.from, request.to))).toBe(true)
    expect(componentName(UsageExportRequest)).toBe("UsageExportRequest")
  })
})
