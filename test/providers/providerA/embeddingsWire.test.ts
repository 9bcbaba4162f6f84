import { describe, expect, it } from "@effect/vitest"
import { JSONSchema, Schema } from "effect"
import ProviderAClient from "openai"
import {
  CreateEmbeddingResponse,
  EmbeddingRequest,
  MAX_EMBEDDING_INPUTS
} from "../../../src/providers/providerA/embeddingsWire"
import { captureRequest } from "../../api/schemas/captureServer"
import { type BadCase, decodeOrFail, issueOf, without } from "../../api/schemas/decodeHelpers"

const minimal = { model: "text-embedding-ada-002", input: "The food was delicious." }
const withField = (field: string, value: unknown) => ({ ...minimal, [field]: value })

describe("EmbeddingRequest", () => {
  const inputs: ReadonlyArray<readonly [string, unknown]> = [
    ["one string", "hello"],
    ["several strings", ["hello", "world"]],
    ["one token array", [15339, 1917]],
    ["token id 0", [0]],
    ["several token arrays", [[15339], [1917, 0]]],
    ["the most inputs", Array.from({ length: MAX_EMBEDDING_INPUTS }, () => "x")]
  ]
  it.each(inputs)("accepts %s", (_, input) => {
    expect(decodeOrFail(EmbeddingRequest, withField("input", input)).input).toEqual(input)
  })

  it("accepts every optional parameter and drops unknown ones", () => {
    const body = { ...minimal, encoding_format: "base64", dimensions: 1, user: "u-1" }
    expect(decodeOrFail(EmbeddingRequest, { ...body, extra: true })).toEqual(body)
    expect(issueOf(EmbeddingRequest, withField("encoding_format", "float"))).toBe("ok")
    expect(decodeOrFail(EmbeddingRequest, withField("encoding_format", null))).toEqual(minimal)
  })

  const badCases: ReadonlyArray<BadCase> = [
    { name: "input missing", body: without(minimal, "input"), param: "input", message: "Missing required parameter: 'input'." },
    { name: "empty string", body: withField("input", ""), param: "input", message: "input must not be an empty string." },
    { name: "empty array", body: withField("input", []), param: "input", message: "input must not be an empty array." },
    {
      name: "too many inputs",
      body: withField("input", Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => "x")),
      param: "input",
      message: "input must contain at most 2048 items, got 2049."
    },
    {
      name: "input of the wrong type",
      body: withField("input", 5),
      param: "input",
      message:
        "input must be a string, an array of strings, an array of token ids or an array of token arrays, got 5."
    },
    {
      name: "a number among strings",
      body: withField("input", ["a", "b", 3]),
      param: "input[2]",
      message: "input[2] must be a string like input[0], got 3."
    },
    {
      name: "a string among tokens",
      body: withField("input", [1, 2, "x"]),
      param: "input[2]",
      message: "input[2] must be a token id (an integer >= 0) like input[0], got \"x\"."
    },
    {
      name: "an empty string among strings",
      body: withField("input", ["a", ""]),
      param: "input[1]",
      message: "input[1] must not be an empty string."
    },
    {
      name: "a negative token",
      body: withField("input", [1, -1]),
      param: "input[1]",
      message: "input[1] must be a token id (an integer >= 0), got -1."
    },
    {
      name: "a fractional token",
      body: withField("input", [1.5]),
      param: "input[0]",
      message: "input[0] must be a token id (an integer >= 0), got 1.5."
    },
    {
      name: "an empty token array",
      body: withField("input", [[1], []]),
      param: "input[1]",
      message: "input[1] must not be an empty array of tokens."
    },
    {
      name: "a bad token inside a token array",
      body: withField("input", [[1], [2, "x"]]),
      param: "input[1][1]",
      message: "input[1][1] must be a token id (an integer >= 0), got \"x\"."
    },
    {
      name: "null as the first input",
      body: withField("input", [null]),
      param: "input[0]",
      message: "input[0] must be a string, a token id or an array of token ids."
    },
    { name: "model missing", body: without(minimal, "model"), param: "model", message: "Missing required parameter: 'model'." },
    { name: "model empty", body: withField("model", ""), param: "model", message: "model must be a non-empty string, got \"\"." },
    {
      name: "unknown encoding_format",
      body: withField("encoding_format", "int8"),
      param: "encoding_format",
      message: "encoding_format must be one of float, base64, got \"int8\"."
    },
    {
      name: "dimensions 0",
      body: withField("dimensions", 0),
      param: "dimensions",
      message: "dimensions must be an integer greater than or equal to 1, got 0."
    },
    {
      name: "dimensions fractional",
      body: withField("dimensions", 1.5),
      param: "dimensions",
      message: "dimensions must be an integer greater than or equal to 1, got 1.5."
    },
    { name: "user not a string", body: withField("user", 1), param: "user", message: "user must be a string, got 1." }
  ]

  it.each(badCases)("rejects: $name", ({ body, param, message }) => {
    expect(issueOf(EmbeddingRequest, body)).toEqual({ param, message })
  })

  it("documents the four input forms in its JSON Schema", () => {
    const document = JSON.stringify(JSONSchema.make(EmbeddingRequest))
    expect(document).toContain("\"maxItems\":2048")
    expect(document).toContain("\"minimum\":0")
  })
})

const floatsToBase64 = (values: ReadonlyArray<number>): string =>
  Buffer.from(new Float32Array(values).buffer).toString("base64")

describe("embeddings with the official client", () => {
  it("decodes the request the client sends by default (base64), and the client decodes the vectors", async () => {
    const response: CreateEmbeddingResponse = {
      object: "list",
      data: [
        { object: "embedding", index: 0, embedding: floatsToBase64([0.5, -1]) },
        { object: "embedding", index: 1, embedding: floatsToBase64([0.25, 2]) }
      ],
      model: "text-embedding-ada-002",
      usage: { prompt_tokens: 4, total_tokens: 4 }
    }
    expect(Schema.decodeUnknownSync(CreateEmbeddingResponse)(response)).toEqual(response)
    const { request, result } = await captureRequest(
      { contentType: "application/json", body: JSON.stringify(response) },
      (origin) =>
        new ProviderAClient({ apiKey: "test-key", baseURL: `${origin}/provider_a/eu/v1`, maxRetries: 0 }).embeddings.create({
          model: "text-embedding-ada-002",
          input: ["first", "second"]
        })
    )
    expect(request.path).toBe("/provider_a/eu/v1/embeddings")
    const decoded = decodeOrFail(EmbeddingRequest, request.body)
    expect(decoded.encoding_format).toBe("base64")
    expect(decoded.input).toEqual(["first", "second"])
    expect(result.data.map((item) => item.embedding)).toEqual([[0.5, -1], [0.25, 2]])
  })

  it("the float form of the response decodes too", () => {
    const response = {
      object: "list",
      data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }],
      model: "text-embedding-ada-002",
      usage: { prompt_tokens: 1, total_tokens: 1 }
    }
    expect(Schema.decodeUnknownSync(CreateEmbeddingResponse)(response)).toEqual(response)
    expect(() => Schema.decodeUnknownSync(CreateEmbeddingResponse)({ ...response, object: "embedding" })).toThrow()
  })
})
