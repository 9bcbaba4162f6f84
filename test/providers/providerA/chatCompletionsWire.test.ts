import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import ProviderAClient from "openai"
import {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ProviderAErrorBody
} from "../../../src/providers/providerA/chatCompletionsWire"
import { captureRequest, dataOnlySse } from "../../api/schemas/captureServer"
import { type BadCase, decodeOrFail, issueOf, without } from "../../api/schemas/decodeHelpers"

const minimal = { model: "chatgen-4o", messages: [{ role: "user", content: "Hello" }] }
const withField = (field: string, value: unknown) => ({ ...minimal, [field]: value })

const tool = (name: string) => ({ type: "function", function: { name } })
const legacyFunction = (name: string) => ({ name })

describe("ChatCompletionRequest", () => {
  it("decodes a minimal request and keeps only known fields", () => {
    const decoded = decodeOrFail(ChatCompletionRequest, { ...minimal, unknown_field: 1 })
    expect(decoded).toEqual(minimal)
  })

  it("decodes every message role and content form", () => {
    const body = {
      ...minimal,
      messages: [
        { role: "system", content: [{ type: "text", text: "Be brief." }], name: "setup" },
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
            { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } },
            { type: "file", file: { file_id: "file-1", filename: "a.pdf" } }
          ]
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{\"q\":1}" } }]
        },
        { role: "tool", tool_call_id: "call_1", content: "42" },
        { role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
        { role: "assistant", content: null, function_call: { name: "lookup", arguments: "{}" } },
        { role: "function", name: "lookup", content: null }
      ]
    }
    const decoded = decodeOrFail(ChatCompletionRequest, body)
    expect(decoded.messages).toHaveLength(7)
    expect(decoded.messages[1]).toEqual(body.messages[1])
  })

  it("accepts null for optional parameters and leaves them out", () => {
    const decoded = decodeOrFail(ChatCompletionRequest, {
      ...minimal,
      temperature: null,
      max_tokens: null,
      stop: null,
      tools: null
    })
    expect(decoded).toEqual(minimal)
  })

  it("accepts the unsupported parameters whatever they hold", () => {
    const odd = { ...minimal, n: 7, service_tier: ["x"], parallel_tool_calls: "yes", stream_options: 3 }
    const decoded = decodeOrFail(ChatCompletionRequest, odd)
    expect(decoded.n).toBe(7)
    expect(decoded.service_tier).toEqual(["x"])
    expect(decoded.parallel_tool_calls).toBe("yes")
    expect(decoded.stream_options).toBe(3)
  })

  it("accepts tools, tool_choice, functions, function_call and their defaults", () => {
    const decoded = decodeOrFail(ChatCompletionRequest, {
      ...minimal,
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather-2",
            description: "Weather",
            parameters: { type: "object", properties: { city: { type: "string" } } },
            strict: true
          }
        },
        tool("no_parameters")
      ],
      tool_choice: { type: "function", function: { name: "get_weather-2" } },
      functions: [{ name: "legacy", parameters: { type: "object" } }],
      function_call: { name: "legacy" }
    })
    expect(decoded.tools?.[0]?.function.parameters).toEqual({
      type: "object",
      properties: { city: { type: "string" } }
    })
    expect(decoded.tool_choice).toEqual({ type: "function", function: { name: "get_weather-2" } })
  })

  describe("range bounds are inclusive", () => {
    const accepted: ReadonlyArray<readonly [string, unknown]> = [
      ["temperature", 0],
      ["temperature", 2],
      ["top_p", 0],
      ["top_p", 1],
      ["frequency_penalty", -2],
      ["frequency_penalty", 2],
      ["presence_penalty", -2],
      ["presence_penalty", 2],
      ["max_tokens", 1],
      ["max_completion_tokens", 1],
      ["logit_bias", { "50256": -100, "1": 100 }],
      ["stop", "END"],
      ["stop", ["a", "b", "c", "d"]],
      ["tools", Array.from({ length: 128 }, (_, index) => tool(`t${index}`))],
      ["functions", Array.from({ length: 128 }, (_, index) => legacyFunction(`f${index}`))],
      ["seed", -5],
      ["response_format", { type: "text" }],
      ["response_format", { type: "json_object" }],
      ["response_format", { type: "json_schema", json_schema: { name: "answer-1_x", schema: { type: "object" }, strict: true, description: "d" } }],
      ["response_format", { type: "json_schema", json_schema: { name: "n".repeat(64) } }],
      ["tool_choice", "none"],
      ["tool_choice", "auto"],
      ["tool_choice", "required"],
      ["function_call", "none"],
      ["function_call", "auto"]
    ]
    it.each(accepted)("%s = %j", (field, value) => {
      expect(issueOf(ChatCompletionRequest, withField(field, value))).toBe("ok")
    })

    it.each([0, 20])("top_logprobs = %i with logprobs", (value) => {
      expect(issueOf(ChatCompletionRequest, { ...minimal, logprobs: true, top_logprobs: value })).toBe("ok")
    })
  })

  const badCases: ReadonlyArray<BadCase> = [
    {
      name: "model missing",
      body: without(minimal, "model"),
      param: "model",
      message: "Missing required parameter: 'model'."
    },
    { name: "model empty", body: withField("model", ""), param: "model", message: "model must be a non-empty string, got \"\"." },
    {
      name: "messages missing",
      body: without(minimal, "messages"),
      param: "messages",
      message: "Missing required parameter: 'messages'."
    },
    {
      name: "messages empty",
      body: withField("messages", []),
      param: "messages",
      message: "messages must contain at least one message."
    },
    {
      name: "messages not an array",
      body: withField("messages", "Hello"),
      param: "messages",
      message: "messages must be an array of message objects, got \"Hello\"."
    },
    {
      name: "message not an object",
      body: withField("messages", ["Hello"]),
      param: "messages[0]",
      message: "messages[0]: expected a message object, got \"Hello\""
    },
    {
      name: "unknown role",
      body: withField("messages", [{ role: "developer", content: "x" }]),
      param: "messages[0].role",
      message: "messages[0].role: expected one of system, user, assistant, tool, function, got \"developer\""
    },
    {
      name: "role missing",
      body: withField("messages", [{ content: "x" }]),
      param: "messages[0].role",
      message: "Missing required parameter: 'messages[0].role'."
    },
    {
      name: "user content missing",
      body: withField("messages", [{ role: "user" }]),
      param: "messages[0].content",
      message: "Missing required parameter: 'messages[0].content'."
    },
    {
      name: "user content of the wrong type",
      body: withField("messages", [{ role: "user", content: 5 }]),
      param: "messages[0].content",
      message: "messages[0].content: expected a string or an array of content parts, got 5"
    },
    {
      name: "unknown content part type",
      body: withField("messages", [{ role: "user", content: [{ type: "video" }] }]),
      param: "messages[0].content[0].type",
      message: "messages[0].content[0].type: expected one of text, image_url, input_audio, file, got \"video\""
    },
    {
      name: "image part without url",
      body: withField("messages", [{ role: "user", content: [{ type: "image_url", image_url: {} }] }]),
      param: "messages[0].content[0].image_url.url",
      message: "Missing required parameter: 'messages[0].content[0].image_url.url'."
    },
    {
      name: "image detail unknown",
      body: withField("messages", [
        { role: "user", content: [{ type: "image_url", image_url: { url: "u", detail: "ultra" } }] }
      ]),
      param: "messages[0].content[0].image_url.detail",
      message: "image_url.detail must be one of auto, low, high, got \"ultra\"."
    },
    {
      name: "assistant without content or tool calls",
      body: withField("messages", [{ role: "user", content: "x" }, { role: "assistant", content: null }]),
      param: "messages[1].content",
      message: "An assistant message needs content unless it has tool_calls or function_call."
    },
    {
      name: "tool message without tool_call_id",
      body: withField("messages", [{ role: "tool", content: "42" }]),
      param: "messages[0].tool_call_id",
      message: "Missing required parameter: 'messages[0].tool_call_id'."
    },
    {
      name: "assistant tool call without function",
      body: withField("messages", [{ role: "assistant", tool_calls: [{ id: "c", type: "function" }] }]),
      param: "messages[0].tool_calls[0].function",
      message: "Missing required parameter: 'messages[0].tool_calls[0].function'."
    },
    {
      name: "function message without name",
      body: withField("messages", [{ role: "function", content: "x" }]),
      param: "messages[0].name",
      message: "Missing required parameter: 'messages[0].name'."
    },
    {
      name: "max_tokens 0",
      body: withField("max_tokens", 0),
      param: "max_tokens",
      message: "max_tokens must be an integer greater than or equal to 1, got 0."
    },
    {
      name: "max_tokens fractional",
      body: withField("max_tokens", 1.5),
      param: "max_tokens",
      message: "max_tokens must be an integer greater than or equal to 1, got 1.5."
    },
    {
      name: "max_completion_tokens 0",
      body: withField("max_completion_tokens", 0),
      param: "max_completion_tokens",
      message: "max_completion_tokens must be an integer greater than or equal to 1, got 0."
    },
    {
      name: "temperature above 2",
      body: withField("temperature", 2.0001),
      param: "temperature",
      message: "temperature must be a number between 0 and 2, got 2.0001."
    },
    {
      name: "temperature below 0",
      body: withField("temperature", -0.0001),
      param: "temperature",
      message: "temperature must be a number between 0 and 2, got -0.0001."
    },
    {
      name: "temperature as a string",
      body: withField("temperature", "0.5"),
      param: "temperature",
      message: "temperature must be a number between 0 and 2, got \"0.5\"."
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
      name: "frequency_penalty above 2",
      body: withField("frequency_penalty", 2.0001),
      param: "frequency_penalty",
      message: "frequency_penalty must be a number between -2 and 2, got 2.0001."
    },
    {
      name: "frequency_penalty below -2",
      body: withField("frequency_penalty", -2.0001),
      param: "frequency_penalty",
      message: "frequency_penalty must be a number between -2 and 2, got -2.0001."
    },
    {
      name: "presence_penalty above 2",
      body: withField("presence_penalty", 2.0001),
      param: "presence_penalty",
      message: "presence_penalty must be a number between -2 and 2, got 2.0001."
    },
    {
      name: "presence_penalty below -2",
      body: withField("presence_penalty", -2.0001),
      param: "presence_penalty",
      message: "presence_penalty must be a number between -2 and 2, got -2.0001."
    },
    {
      name: "logit_bias above 100",
      body: withField("logit_bias", { "50256": 100.0001 }),
      param: "logit_bias.50256",
      message: "logit_bias values must be a number between -100 and 100, got 100.0001."
    },
    {
      name: "logit_bias below -100",
      body: withField("logit_bias", { "50256": -100.0001 }),
      param: "logit_bias.50256",
      message: "logit_bias values must be a number between -100 and 100, got -100.0001."
    },
    {
      name: "logit_bias key not a token id",
      body: withField("logit_bias", { hello: 1 }),
      param: "logit_bias.hello",
      message: "logit_bias keys must be token ids (integers written as strings), got \"hello\"."
    },
    {
      name: "logit_bias not an object",
      body: withField("logit_bias", [1]),
      param: "logit_bias",
      message: "logit_bias must be an object mapping token ids to numbers, got [1]."
    },
    {
      name: "logprobs not a boolean",
      body: withField("logprobs", "yes"),
      param: "logprobs",
      message: "logprobs must be a boolean, got \"yes\"."
    },
    {
      name: "top_logprobs without logprobs",
      body: withField("top_logprobs", 5),
      param: "top_logprobs",
      message: "top_logprobs is only allowed when logprobs is true."
    },
    {
      name: "top_logprobs with logprobs false",
      body: { ...minimal, logprobs: false, top_logprobs: 0 },
      param: "top_logprobs",
      message: "top_logprobs is only allowed when logprobs is true."
    },
    {
      name: "top_logprobs above 20",
      body: { ...minimal, logprobs: true, top_logprobs: 21 },
      param: "top_logprobs",
      message: "top_logprobs must be an integer between 0 and 20, got 21."
    },
    {
      name: "top_logprobs below 0",
      body: { ...minimal, logprobs: true, top_logprobs: -1 },
      param: "top_logprobs",
      message: "top_logprobs must be an integer between 0 and 20, got -1."
    },
    {
      name: "five stop sequences",
      body: withField("stop", ["a", "b", "c", "d", "e"]),
      param: "stop",
      message: "stop must be a string or an array of at most 4 strings, got [\"a\",\"b\",\"c\",\"d\",\"e\"]."
    },
    {
      name: "stop of the wrong type",
      body: withField("stop", ["a", 1]),
      param: "stop",
      message: "stop must be a string or an array of at most 4 strings, got [\"a\",1]."
    },
    { name: "stream not a boolean", body: withField("stream", "true"), param: "stream", message: "stream must be a boolean, got \"true\"." },
    {
      name: "response_format json_schema without json_schema",
      body: withField("response_format", { type: "json_schema" }),
      param: "response_format.json_schema",
      message: "response_format.json_schema is required when response_format.type is 'json_schema'."
    },
    {
      name: "response_format json_schema name with a space",
      body: withField("response_format", { type: "json_schema", json_schema: { name: "my schema" } }),
      param: "response_format.json_schema.name",
      message:
        "response_format.json_schema.name must be 1 to 64 letters, digits, underscores or dashes (^[a-zA-Z0-9_-]{1,64}$), got \"my schema\"."
    },
    {
      name: "response_format json_schema name of 65 characters",
      body: withField("response_format", { type: "json_schema", json_schema: { name: "n".repeat(65) } }),
      param: "response_format.json_schema.name",
      message: `response_format.json_schema.name must be 1 to 64 letters, digits, underscores or dashes (^[a-zA-Z0-9_-]{1,64}$), got "${
        "n".repeat(65)
      }".`
    },
    {
      name: "response_format json_schema without a name",
      body: withField("response_format", { type: "json_schema", json_schema: { schema: { type: "object" } } }),
      param: "response_format.json_schema.name",
      message: "Missing required parameter: 'response_format.json_schema.name'."
    },
    {
      name: "response_format json_schema schema not an object",
      body: withField("response_format", { type: "json_schema", json_schema: { name: "answer", schema: ["type"] } }),
      param: "response_format.json_schema.schema",
      message: "response_format.json_schema.schema (a JSON Schema) must be a JSON object, got [\"type\"]."
    },
    {
      name: "response_format json_schema strict not a boolean",
      body: withField("response_format", { type: "json_schema", json_schema: { name: "answer", strict: "yes" } }),
      param: "response_format.json_schema.strict",
      message: "response_format.json_schema.strict must be a boolean, got \"yes\"."
    },
    {
      name: "response_format unknown type",
      body: withField("response_format", { type: "yaml" }),
      param: "response_format.type",
      message: "response_format.type must be 'text', 'json_object' or 'json_schema', got \"yaml\"."
    },
    { name: "seed fractional", body: withField("seed", 1.5), param: "seed", message: "seed must be an integer, got 1.5." },
    { name: "user not a string", body: withField("user", 5), param: "user", message: "user must be a string, got 5." },
    {
      name: "129 tools",
      body: withField("tools", Array.from({ length: 129 }, (_, index) => tool(`t${index}`))),
      param: "tools",
      message: "tools must contain at most 128 tools."
    },
    {
      name: "tool name with a space",
      body: withField("tools", [tool("get weather")]),
      param: "tools[0].function.name",
      message:
        "tools[].function.name must be 1 to 64 letters, digits, underscores or dashes (^[a-zA-Z0-9_-]{1,64}$), got \"get weather\"."
    },
    {
      name: "tool name of 65 characters",
      body: withField("tools", [tool("a".repeat(64)), tool("b".repeat(65))]),
      param: "tools[1].function.name",
      message: `tools[].function.name must be 1 to 64 letters, digits, underscores or dashes (^[a-zA-Z0-9_-]{1,64}$), got "${
        "b".repeat(65)
      }".`
    },
    {
      name: "tool parameters not an object",
      body: withField("tools", [tool("a"), tool("b"), tool("c"), {
        type: "function",
        function: { name: "d", parameters: ["city"] }
      }]),
      param: "tools[3].function.parameters",
      message: "tools[].function.parameters (a JSON Schema) must be a JSON object, got [\"city\"]."
    },
    {
      name: "tool of another type",
      body: withField("tools", [{ type: "custom", function: { name: "a" } }]),
      param: "tools[0].type",
      message: "tools[0].type: expected \"function\", got \"custom\""
    },
    {
      name: "tool without function",
      body: withField("tools", [{ type: "function" }]),
      param: "tools[0].function",
      message: "Missing required parameter: 'tools[0].function'."
    },
    {
      name: "tool_choice unknown string",
      body: withField("tool_choice", "always"),
      param: "tool_choice",
      message: "tool_choice: expected one of none, auto, required or an object, got \"always\""
    },
    {
      name: "tool_choice object without function",
      body: withField("tool_choice", { type: "function" }),
      param: "tool_choice.function",
      message: "Missing required parameter: 'tool_choice.function'."
    },
    {
      name: "129 functions",
      body: withField("functions", Array.from({ length: 129 }, (_, index) => legacyFunction(`f${index}`))),
      param: "functions",
      message: "functions must contain at most 128 functions."
    },
    {
      name: "function parameters not an object",
      body: withField("functions", [{ name: "f", parameters: "none" }]),
      param: "functions[0].parameters",
      message: "functions[].parameters (a JSON Schema) must be a JSON object, got \"none\"."
    },
    {
      name: "function_call unknown string",
      body: withField("function_call", "required"),
      param: "function_call",
      message: "function_call: expected one of none, auto or an object, got \"required\""
    }
  ]

  it.each(badCases)("rejects: $name", ({ body, param, message }) => {
    expect(issueOf(ChatCompletionRequest, body)).toEqual({ param, message })
  })

  it("rejects a body that is not an object", () => {
    expect(issueOf(ChatCompletionRequest, [minimal])).toEqual({
      param: null,
      message: "The request body must be a JSON object."
    })
  })
})

// ---------------------------------------------------------------------------------------------
// What the official client sends, and whether it accepts the response shapes
// ---------------------------------------------------------------------------------------------

const completionFixture: ChatCompletion = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1_767_600_000,
  model: "chatgen-4o",
  choices: [{
    index: 0,
    message: {
      role: "assistant",
      content: null,
      refusal: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } }]
    },
    finish_reason: "tool_calls",
    logprobs: null
  }],
  usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 },
  system_fingerprint: "fp_1"
}

const chunk = (choices: ChatCompletionChunk["choices"], usage?: ChatCompletionChunk["usage"]): ChatCompletionChunk => ({
  id: "chatcmpl-2",
  object: "chat.completion.chunk",
  created: 1_767_600_000,
  model: "chatgen-4o",
  system_fingerprint: "fp_1",
  choices,
  ...(usage === undefined ? {} : { usage })
})

const chunkFixtures: ReadonlyArray<ChatCompletionChunk> = [
  chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }], null),
  chunk([{ index: 0, delta: { content: "Hel" }, finish_reason: null }], null),
  chunk([{ index: 0, delta: { content: "lo" }, finish_reason: null }], null),
  chunk([{ index: 0, delta: {}, finish_reason: "stop" }], null),
  chunk([], { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 })
]

const client = (origin: string) => new ProviderAClient({ apiKey: "test-key", baseURL: `${origin}/provider_a/eu/v1`, maxRetries: 0 })

describe("chat completions with the official client", () => {
  it("decodes the request the client sends, and the client reads a ChatCompletion", async () => {
    expect(Schema.decodeUnknownSync(ChatCompletion)(completionFixture)).toEqual(completionFixture)
    const { request, result } = await captureRequest(
      { contentType: "application/json", body: JSON.stringify(completionFixture) },
      (origin) =>
        client(origin).chat.completions.create({
          model: "chatgen-4o",
          messages: [
            { role: "system", content: "You are a weather bot." },
            {
              role: "user",
              content: [
                { type: "text", text: "Weather in Oslo?" },
                { type: "image_url", image_url: { url: "https://example.test/oslo.png", detail: "auto" } }
              ]
            }
          ],
          tools: [{
            type: "function",
            function: {
              name: "get_weather",
              description: "Current weather",
              parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
            }
          }],
          tool_choice: "auto",
          temperature: 0.2,
          top_p: 1,
          max_completion_tokens: 200,
          logprobs: true,
          top_logprobs: 2,
          stop: ["\n\n"],
          seed: 7,
          user: "user-1",
          response_format: { type: "text" },
          n: 1,
          parallel_tool_calls: false
        })
    )
    expect(request.path).toBe("/provider_a/eu/v1/chat/completions")
    const decoded = decodeOrFail(ChatCompletionRequest, request.body)
    expect(decoded.model).toBe("chatgen-4o")
    expect(decoded.tools?.[0]?.function.name).toBe("get_weather")
    expect(decoded.n).toBe(1)
    expect(result.choices[0]?.message.tool_calls?.[0]?.id).toBe("call_1")
    expect(result.system_fingerprint).toBe("fp_1")
  })

  it("the client's streaming helper accepts the chunk shapes", async () => {
    for (const fixture of chunkFixtures) {
      expect(Schema.decodeUnknownSync(ChatCompletionChunk)(fixture)).toEqual(fixture)
    }
    const { request, result } = await captureRequest(
      { contentType: "text/event-stream", body: dataOnlySse(chunkFixtures) },
      async (origin) => {
        const stream = client(origin).chat.completions.stream({
          model: "chatgen-4o",
          messages: [{ role: "user", content: "Say hello" }],
          stream_options: { include_usage: true }
        })
        return stream.finalChatCompletion()
      }
    )
    const decoded = decodeOrFail(ChatCompletionRequest, request.body)
    expect(decoded.stream).toBe(true)
    expect(decoded.stream_options).toEqual({ include_usage: true })
    expect(result.choices[0]?.message.content).toBe("Hello")
    expect(result.choices[0]?.finish_reason).toBe("stop")
    expect(result.usage?.total_tokens).toBe(7)
  })

  it("the client reads message, type, param and code from the error body", async () => {
    const errorBody: ProviderAErrorBody = {
      error: {
        message: "temperature must be a number between 0 and 2, got 3.",
        type: "invalid_request_error",
        param: "temperature",
        code: null
      }
    }
    expect(Schema.decodeUnknownSync(ProviderAErrorBody)(errorBody)).toEqual(errorBody)
    const { result: failure } = await captureRequest(
      { status: 400, contentType: "application/json", body: JSON.stringify(errorBody) },
      (origin) =>
        client(origin).chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "x" }] })
          .then(() => undefined, (error: unknown) => error)
    )
    expect(failure).toBeInstanceOf(ProviderAClient.BadRequestError)
    if (failure instanceof ProviderAClient.BadRequestError) {
      expect(failure.message).toBe("400 temperature must be a number between 0 and 2, got 3.")
      expect(failure.param).toBe("temperature")
      expect(failure.type).toBe("invalid_request_error")
    }
  })
})
