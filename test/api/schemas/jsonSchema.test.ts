/** The OpenAPI document is generated from these schemas: each must yield a JSON Schema. */
import { describe, expect, it } from "@effect/vitest"
import { JSONSchema, Schema } from "effect"
import * as chatCompletions from "../../../src/providers/providerA/chatCompletionsWire"
import * as embeddings from "../../../src/providers/providerA/embeddingsWire"
import * as fim from "../../../src/providers/providerC/fimWire"
import * as messages from "../../../src/providers/providerB/messagesWire"
import * as usageExport from "../../../src/api/schemas/usageExport"

const schemasOf = (module: Record<string, unknown>): ReadonlyArray<readonly [string, Schema.Schema<unknown, unknown>]> =>
  Object.entries(module).flatMap(([name, value]) =>
    Schema.isSchema(value) ? [[name, value as Schema.Schema<unknown, unknown>] as const] : []
  )

const allSchemas = [
  ...schemasOf(chatCompletions),
  ...schemasOf(embeddings),
  ...schemasOf(fim),
  ...schemasOf(messages),
  ...schemasOf(usageExport)
]

describe("JSON Schema of the contracts", () => {
  it("covers the request, response and error schemas", () => {
    const names = allSchemas.map(([name]) => name)
    for (
      const expected of [
        "ChatCompletionRequest",
        "ChatCompletion",
        "ChatCompletionChunk",
        "ProviderAErrorBody",
        "EmbeddingRequest",
        "CreateEmbeddingResponse",
        "MessagesRequest",
        "Message",
        "MessageStreamEvent",
        "ProviderBErrorBody",
        "FimCompletionRequest",
        "FimCompletionResponse",
        "FimCompletionChunk",
        "ProviderCErrorBody",
        "UsageExportRequest",
        "UsageExportResult",
        "UsageExportErrorBody"
      ]
    ) {
      expect(names).toContain(expected)
    }
  })

  it.each(allSchemas)("%s has a JSON Schema", (_, schema) => {
    const document = JSONSchema.make(schema)
    expect(document.$schema).toBe("http://json-schema.org/draft-07/schema#")
  })

  it("documents the ranges", () => {
    const chat = JSON.stringify(JSONSchema.make(chatCompletions.ChatCompletionRequest))
    expect(chat).toContain("\"maximum\":2")
    expect(chat).toContain("\"maxItems\":128")
    const fimRequest = JSON.stringify(JSONSchema.make(fim.FimCompletionRequest))
    expect(fimRequest).toContain("\"maximum\":1.5")
  })
})
