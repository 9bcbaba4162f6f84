import { describe, expect, it } from "@effect/vitest"
import { Mistral as ProviderCClient } from "@mistralai/mistralai"
import { SDKError } from "@mistralai/mistralai/models/errors"
import { Schema } from "effect"
import {
  FimCompletionChunk,
  FimCompletionRequest,
  FimCompletionResponse,
  ProviderCErrorBody
} from "../../../src/providers/providerC/fimWire"
import { captureRequest, dataOnlySse } from "../../api/schemas/captureServer"
import { type BadCase, decodeOrFail, issueOf, without } from "../../api/schemas/decodeHelpers"

const minimal = { model: "codemodel-2501", prompt: "def add(a, b):" }
const withField = (field: string, value: unknown) => ({ ...minimal, [field]: value })

describe("FimCompletionRequest", () => {
  it("fills the defaults: model, suffix and stream", () => {
    expect(decodeOrFail(FimCompletionRequest, { prompt: "x" })).toEqual({
      model: "codemodel-2501",
      prompt: "x",
      suffix: "",
      stream: false
    })
    expect(decodeOrFail(FimCompletionRequest, { prompt: "x", model: null, suffix: null, stream: null })).toEqual({
      model: "codemodel-2501",
      prompt: "x",
      suffix: "",
      stream: false
    })
  })

  it("keeps the given values", () => {
    const body = {
      model: "codemodel-2501",
      prompt: "def add(a, b):",
      suffix: "\n\nprint(add(1, 2))",
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 64,
      min_tokens: 1,
      random_seed: 42,
      stop: ["\n\n"],
      stream: true,
      metadata: { trace: "t-1" },
      prompt_cache_key: "k"
    }
    expect(decodeOrFail(FimCompletionRequest, body)).toEqual(body)
  })

  const accepted: ReadonlyArray<readonly [string, unknown]> = [
    ["temperature", 0],
    ["temperature", 1.5],
    ["top_p", 0],
    ["top_p", 1],
    ["max_tokens", 0],
    ["min_tokens", 0],
    ["random_seed", 0],
    ["stop", "\n"],
    ["stop", ["a", "b", "c", "d", "e", "f"]],
    ["prompt", ""]
  ]
  it.each(accepted)("accepts %s = %j", (field, value) => {
    expect(issueOf(FimCompletionRequest, withField(field, value))).toBe("ok")
  })

  const badCases: ReadonlyArray<BadCase> = [
    { name: "prompt missing", body: without(minimal, "prompt"), param: "prompt", message: "Missing required parameter: 'prompt'." },
    { name: "prompt not a string", body: withField("prompt", 1), param: "prompt", message: "prompt must be a string, got 1." },
    { name: "model empty", body: withField("model", ""), param: "model", message: "model must be a non-empty string, got \"\"." },
    { name: "suffix not a string", body: withField("suffix", 1), param: "suffix", message: "suffix must be a string, got 1." },
    {
      name: "temperature above 1.5",
      body: withField("temperature", 1.5001),
      param: "temperature",
      message: "temperature must be a number between 0 and 1.5, got 1.5001."
    },
    {
      name: "temperature below 0",
      body: withField("temperature", -0.0001),
      param: "temperature",
      message: "temperature must be a number between 0 and 1.5, got -0.0001."
    },
    {
      name: "top_p above 1",
      body: withField("top_p", 1.0001),
      param: "top_p",
      message: "top_p must be a number between 0 and 1, got 1.0001."
    },
    {
      name: "top_p below 0",
      body: withField("top_p", -0.0001),
      param: "top_p",
      message: "top_p must be a number between 0 and 1, got -0.0001."
    },
    {
      name: "max_tokens below 0",
      body: withField("max_tokens", -1),
      param: "max_tokens",
      message: "max_tokens must be an integer greater than or equal to 0, got -1."
    },
    {
      name: "max_tokens fractional",
      body: withField("max_tokens", 2.5),
      param: "max_tokens",
      message: "max_tokens must be an integer greater than or equal to 0, got 2.5."
    },
    {
      name: "min_tokens below 0",
      body: withField("min_tokens", -1),
      param: "min_tokens",
      message: "min_tokens must be an integer greater than or equal to 0, got -1."
    },
    {
      name: "random_seed below 0",
      body: withField("random_seed", -1),
      param: "random_seed",
      message: "random_seed must be an integer greater than or equal to 0, got -1."
    },
    {
      name: "stop of the wrong type",
      body: withField("stop", [1]),
      param: "stop",
      message: "stop must be a string or an array of strings, got [1]."
    },
    { name: "stream not a boolean", body: withField("stream", "no"), param: "stream", message: "stream must be a boolean, got \"no\"." },
    {
      name: "metadata not an object",
      body: withField("metadata", "x"),
      param: "metadata",
      message: "metadata: expected an object, got \"x\""
    }
  ]

  it.each(badCases)("rejects: $name", ({ body, param, message }) => {
    expect(issueOf(FimCompletionRequest, body)).toEqual({ param, message })
  })
})

// ---------------------------------------------------------------------------------------------
// What the official client sends, and whether it accepts the response shapes
// ---------------------------------------------------------------------------------------------

const responseFixture: FimCompletionResponse = {
  id: "fim-1",
  object: "chat.completion",
  model: "codemodel-2501",
  created: 1_767_600_000,
  usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
  choices: [{ index: 0, message: { role: "assistant", content: "\n    return a + b", prefix: false }, finish_reason: "stop" }]
}

const chunkFixtures: ReadonlyArray<FimCompletionChunk> = [
  {
    id: "fim-2",
    object: "chat.completion.chunk",
    created: 1_767_600_000,
    model: "codemodel-2501",
    choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]
  },
  {
    id: "fim-2",
    object: "chat.completion.chunk",
    created: 1_767_600_000,
    model: "codemodel-2501",
    choices: [{ index: 0, delta: { content: "return a + b" }, finish_reason: null }]
  },
  {
    id: "fim-2",
    object: "chat.completion.chunk",
    created: 1_767_600_000,
    model: "codemodel-2501",
    choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 }
  }
]

const client = (origin: string) => new ProviderCClient({ apiKey: "test-key", serverURL: `${origin}/provider_c/eu` })

describe("FIM with the official client", () => {
  it("decodes the request the client sends (stream: false always present), and the client reads the response", async () => {
    expect(Schema.decodeUnknownSync(FimCompletionResponse)(responseFixture)).toEqual(responseFixture)
    const { request, result } = await captureRequest(
      { contentType: "application/json", body: JSON.stringify(responseFixture) },
      (origin) =>
        client(origin).fim.complete({
          model: "codemodel-2501",
          prompt: "def add(a, b):",
          suffix: "\n\nprint(add(1, 2))",
          temperature: 0.2,
          topP: 1,
          maxTokens: 64,
          minTokens: 0,
          randomSeed: 7,
          stop: ["\n\n"]
        })
    )
    expect(request.path).toBe("/provider_c/eu/v1/fim/completions")
    expect(request.body).toMatchObject({ stream: false })
    const decoded = decodeOrFail(FimCompletionRequest, request.body)
    expect(decoded).toMatchObject({ stream: false, max_tokens: 64, random_seed: 7, min_tokens: 0, top_p: 1 })
    expect(result.choices[0]?.finishReason).toBe("stop")
    expect(result.choices[0]?.message?.content).toBe("\n    return a + b")
    expect(result.usage.totalTokens).toBe(14)
  })

  it("the client accepts the stream chunk shapes", async () => {
    for (const fixture of chunkFixtures) {
      expect(Schema.decodeUnknownSync(FimCompletionChunk)(fixture)).toEqual(fixture)
    }
    const { request, result } = await captureRequest(
      { contentType: "text/event-stream", body: dataOnlySse(chunkFixtures) },
      async (origin) => {
        const stream = await client(origin).fim.stream({ model: "codemodel-2501", prompt: "def add(a, b):" })
        const pieces: Array<string> = []
        for await (const event of stream) {
          const content = event.data.choices[0]?.delta.content
          if (typeof content === "string") pieces.push(content)
        }
        return pieces.join("")
      }
    )
    expect(decodeOrFail(FimCompletionRequest, request.body).stream).toBe(true)
    expect(result).toBe("return a + b")
  })

  it("the client's error shows the top-level message of the error body", async () => {
    const errorBody: ProviderCErrorBody = {
      object: "error",
      message: "temperature must be a number between 0 and 1.5, got 2.",
      type: "invalid_request_error",
      param: "temperature",
      code: null
    }
    expect(Schema.decodeUnknownSync(ProviderCErrorBody)(errorBody)).toEqual(errorBody)
    const { result: failure } = await captureRequest(
      { status: 400, contentType: "application/json", body: JSON.stringify(errorBody) },
      (origin) =>
        client(origin).fim.complete({ model: "codemodel-2501", prompt: "x" }).then(
          () => undefined,
          (error: unknown) => error
        )
    )
    expect(failure).toBeInstanceOf(SDKError)
    if (failure instanceof SDKError) {
      expect(failure.statusCode).toBe(400)
      expect(failure.message).toContain(errorBody.message)
    }
  })
})
