import ProviderBClient from "@anthropic-ai/sdk"
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import {
  Message,
  MessagesRequest,
  MessageStreamEvent,
  ProviderBErrorBody
} from "../../../src/providers/providerB/messagesWire"
import { captureRequest, namedEventSse } from "../../api/schemas/captureServer"
import { type BadCase, decodeOrFail, issueOf, without } from "../../api/schemas/decodeHelpers"

const minimal = {
  model: "assistantmodel-sonnet-4-5-20250929",
  max_tokens: 1024,
  messages: [{ role: "user", content: "Hello" }]
}
const withField = (field: string, value: unknown) => ({ ...minimal, [field]: value })
const userBlocks = (blocks: ReadonlyArray<unknown>) => withField("messages", [{ role: "user", content: blocks }])

describe("MessagesRequest", () => {
  it("decodes a minimal request", () => {
    expect(decodeOrFail(MessagesRequest, minimal)).toEqual(minimal)
  })

  it("keeps parameters it does not name, for forwarding (all provider parameters are supported)", () => {
    const body = { ...minimal, thinking: { type: "enabled", budget_tokens: 2048 }, service_tier: "auto" }
    expect(decodeOrFail(MessagesRequest, body)).toEqual(body)
  })

  it("decodes every content block form", () => {
    const body = {
      ...minimal,
      system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Look:" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
            { type: "document", source: { type: "text", media_type: "text/plain", data: "notes" } }
          ]
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Hmm", signature: "sig" },
            { type: "tool_use", id: "toolu_1", name: "lookup", input: { q: "a" } }
          ]
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "42" }], is_error: false },
            { type: "tool_result", tool_use_id: "toolu_1", content: "42" },
            { type: "tool_result", tool_use_id: "toolu_1" }
          ]
        }
      ]
    }
    expect(decodeOrFail(MessagesRequest, body)).toEqual(body)
  })

  it.each(["image/jpeg", "image/png", "image/gif", "image/webp"])("accepts media type %s", (mediaType) => {
    const body = userBlocks([{ type: "image", source: { type: "base64", media_type: mediaType, data: "AA==" } }])
    expect(issueOf(MessagesRequest, body)).toBe("ok")
  })

  const accepted: ReadonlyArray<readonly [string, unknown]> = [
    ["max_tokens", 1],
    ["temperature", 0],
    ["temperature", 1],
    ["top_p", 0],
    ["top_p", 1],
    ["top_k", 0],
    ["stop_sequences", ["\n\nHuman:"]],
    ["stream", true],
    ["system", "You are terse."],
    ["tools", [{ name: "lookup", description: "Look up", input_schema: { type: "object" } }]],
    // The provider's own tools: a versioned type, no input schema.
    ["tools", [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }, { type: "custom", name: "lookup", input_schema: { type: "object" } }]],
    ["messages", [
      { role: "user", content: "Search for it" },
      { role: "assistant", content: [{ type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "it" } }, { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] }] },
      { role: "user", content: "Thanks" }
    ]],
    ["tool_choice", { type: "auto" }],
    ["tool_choice", { type: "any", disable_parallel_tool_use: true }],
    ["tool_choice", { type: "none" }],
    ["tool_choice", { type: "tool", name: "lookup" }],
    ["metadata", { user_id: "u-1" }]
  ]
  it.each(accepted)("accepts %s = %j", (field, value) => {
    expect(issueOf(MessagesRequest, withField(field, value))).toBe("ok")
  })

  const badCases: ReadonlyArray<BadCase> = [
    { name: "model missing", body: without(minimal, "model"), param: "model", message: "Missing required parameter: 'model'." },
    {
      name: "max_tokens missing",
      body: without(minimal, "max_tokens"),
      param: "max_tokens",
      message: "Missing required parameter: 'max_tokens'."
    },
    {
      name: "max_tokens 0",
      body: withField("max_tokens", 0),
      param: "max_tokens",
      message: "max_tokens must be an integer greater than or equal to 1, got 0."
    },
    {
      name: "max_tokens null",
      body: withField("max_tokens", null),
      param: "max_tokens",
      message: "max_tokens must be an integer greater than or equal to 1, got null."
    },
    {
      name: "messages empty",
      body: withField("messages", []),
      param: "messages",
      message: "messages must contain at least one message."
    },
    {
      name: "first message from the assistant",
      body: withField("messages", [{ role: "assistant", content: "Hi" }, { role: "user", content: "Hello" }]),
      param: "messages[0].role",
      message: "messages[0].role must be \"user\": the first message must come from the user."
    },
    {
      name: "system role inside messages",
      body: withField("messages", [{ role: "user", content: "a" }, { role: "system", content: "b" }]),
      param: "messages[1].role",
      message:
        "messages[].role must be \"user\" or \"assistant\": put the system prompt in the top-level system parameter."
    },
    {
      name: "unknown role",
      body: withField("messages", [{ role: "tool", content: "a" }]),
      param: "messages[0].role",
      message: "messages[].role must be \"user\" or \"assistant\", got \"tool\"."
    },
    {
      name: "content missing",
      body: withField("messages", [{ role: "user" }]),
      param: "messages[0].content",
      message: "Missing required parameter: 'messages[0].content'."
    },
    {
      name: "unknown block type",
      body: userBlocks([{ type: "video" }]),
      param: "messages[0].content[0].type",
      message:
        "messages[0].content[0].type: expected one of text, image, tool_use, tool_result, document, search_result, thinking, redacted_thinking, server_tool_use, web_search_tool_result, web_fetch_tool_result, code_execution_tool_result, bash_code_execution_tool_result, text_editor_code_execution_tool_result, mcp_tool_use, mcp_tool_result, container_upload, got \"video\""
    },
    {
      name: "unsupported image media type",
      body: userBlocks([{ type: "text", text: "a" }, {
        type: "image",
        source: { type: "base64", media_type: "image/bmp", data: "AA==" }
      }]),
      param: "messages[0].content[1].source.media_type",
      message: "Image media_type \"image/bmp\" is not supported: use one of image/jpeg, image/png, image/gif, image/webp."
    },
    {
      name: "unknown image source type",
      body: userBlocks([{ type: "image", source: { type: "file", file_id: "f" } }]),
      param: "messages[0].content[0].source.type",
      message:
        "Image source type \"file\" is not supported: send the image base64-encoded, as { \"type\": \"base64\", \"media_type\", \"data\" }."
    },
    {
      name: "image by URL (the spec's images are base64-encoded)",
      body: userBlocks([{ type: "image", source: { type: "url", url: "https://example.test/a.webp" } }]),
      param: "messages[0].content[0].source.type",
      message:
        "Image source type \"url\" is not supported: send the image base64-encoded, as { \"type\": \"base64\", \"media_type\", \"data\" }."
    },
    {
      name: "image without media_type",
      body: userBlocks([{ type: "image", source: { type: "base64", data: "AA==" } }]),
      param: "messages[0].content[0].source.media_type",
      message: "Missing required parameter: 'messages[0].content[0].source.media_type'."
    },
    {
      name: "unsupported media type inside a tool_result",
      body: userBlocks([{
        type: "tool_result",
        tool_use_id: "t",
        content: [{ type: "image", source: { type: "base64", media_type: "application/pdf", data: "AA==" } }]
      }]),
      param: "messages[0].content[0].content[0].source.media_type",
      message: "Image media_type \"application/pdf\" is not supported: use one of image/jpeg, image/png, image/gif, image/webp."
    },
    {
      name: "text block without text",
      body: userBlocks([{ type: "text" }]),
      param: "messages[0].content[0].text",
      message: "Missing required parameter: 'messages[0].content[0].text'."
    },
    {
      name: "tool_use input not an object",
      body: withField("messages", [{ role: "user", content: "a" }, {
        role: "assistant",
        content: [{ type: "tool_use", id: "t", name: "n", input: "{}" }]
      }]),
      param: "messages[1].content[0].input",
      message: "A tool_use block's input must be a JSON object, got \"{}\"."
    },
    {
      name: "tool_result without tool_use_id",
      body: userBlocks([{ type: "tool_result", content: "x" }]),
      param: "messages[0].content[0].tool_use_id",
      message: "Missing required parameter: 'messages[0].content[0].tool_use_id'."
    },
    {
      name: "tool_result with a bad nested block",
      body: userBlocks([{ type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: 5 }] }]),
      param: "messages[0].content[0].content[0].text",
      message: "A text block's text must be a string, got 5."
    },
    {
      name: "temperature above 1",
      body: withField("temperature", 1.0001),
      param: "temperature",
      message: "temperature must be a number between 0 and 1, got 1.0001."
    },
    {
      name: "temperature below 0",
      body: withField("temperature", -0.0001),
      param: "temperature",
      message: "temperature must be a number between 0 and 1, got -0.0001."
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
      name: "top_k below 0",
      body: withField("top_k", -1),
      param: "top_k",
      message: "top_k must be an integer greater than or equal to 0, got -1."
    },
    {
      name: "top_k fractional",
      body: withField("top_k", 0.5),
      param: "top_k",
      message: "top_k must be an integer greater than or equal to 0, got 0.5."
    },
    {
      name: "stop_sequences a string",
      body: withField("stop_sequences", "STOP"),
      param: "stop_sequences",
      message: "stop_sequences must be an array of strings, got \"STOP\"."
    },
    { name: "stream not a boolean", body: withField("stream", 1), param: "stream", message: "stream must be a boolean, got 1." },
    {
      name: "system of the wrong type",
      body: withField("system", 5),
      param: "system",
      message: "system: expected a string or an array of text blocks, got 5"
    },
    {
      name: "tool without input_schema",
      body: withField("tools", [{ name: "lookup" }]),
      param: "tools[0].input_schema",
      message: "Missing required parameter: 'tools[0].input_schema'."
    },
    {
      name: "tool input_schema not an object",
      body: withField("tools", [{ name: "lookup", input_schema: { type: "object" } }, { name: "b", input_schema: [] }]),
      param: "tools[1].input_schema",
      message: "tools[].input_schema (a JSON Schema) must be a JSON object, got []."
    },
    {
      // Not one of the provider's versioned tools, so taken for a custom tool, which needs its schema.
      name: "tool of an unversioned type",
      body: withField("tools", [{ type: "web_search", name: "web_search" }]),
      param: "tools[0].input_schema",
      message: "Missing required parameter: 'tools[0].input_schema'."
    },
    {
      name: "tool without name",
      body: withField("tools", [{ input_schema: { type: "object" } }]),
      param: "tools[0].name",
      message: "Missing required parameter: 'tools[0].name'."
    },
    {
      name: "tool_choice tool without name",
      body: withField("tool_choice", { type: "tool" }),
      param: "tool_choice.name",
      message: "Missing required parameter: 'tool_choice.name'."
    },
    {
      name: "tool_choice unknown type",
      body: withField("tool_choice", { type: "required" }),
      param: "tool_choice.type",
      message: "tool_choice.type: expected one of tool, auto, any, none, got \"required\""
    },
    {
      name: "metadata.user_id not a string",
      body: withField("metadata", { user_id: 5 }),
      param: "metadata.user_id",
      message: "metadata.user_id must be a string, got 5."
    }
  ]

  it.each(badCases)("rejects: $name", ({ body, param, message }) => {
    expect(issueOf(MessagesRequest, body)).toEqual({ param, message })
  })
})

// ---------------------------------------------------------------------------------------------
// What the official client sends, and whether it accepts the response shapes
// ---------------------------------------------------------------------------------------------

const messageFixture: Message = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "assistantmodel-sonnet-4-5-20250929",
  content: [
    { type: "text", text: "Let me check.", citations: null },
    { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } }
  ],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: { input_tokens: 30, output_tokens: 12, cache_creation_input_tokens: null, cache_read_input_tokens: null }
}

const streamFixture: ReadonlyArray<MessageStreamEvent> = [
  {
    type: "message_start",
    message: { ...messageFixture, content: [], stop_reason: null, usage: { input_tokens: 30, output_tokens: 1 } }
  },
  { type: "ping" },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo" } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_2", name: "f", input: {} } },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{\"a\":" } },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "1}" } },
  { type: "content_block_stop", index: 1 },
  { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 9 } },
  { type: "message_stop" }
]

const client = (origin: string) => new ProviderBClient({ apiKey: "test-key", baseURL: `${origin}/provider_b/eu`, maxRetries: 0 })

describe("messages with the official client", () => {
  it("decodes the request the client sends, and the client reads a Message", async () => {
    expect(Schema.decodeUnknownSync(Message)(messageFixture)).toEqual(messageFixture)
    // Parameters the spec lists but this client version no longer types are sent as the caller wrote them.
    const samplingParameters = { temperature: 0.3, top_k: 40, top_p: 0.9 }
    const { request, result } = await captureRequest(
      { contentType: "application/json", body: JSON.stringify(messageFixture) },
      (origin) =>
        client(origin).messages.create({
          model: "assistantmodel-sonnet-4-5-20250929",
          max_tokens: 1024,
          system: "You are a weather bot.",
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "Weather in Oslo?" },
                { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }
              ]
            }
          ],
          tools: [{
            name: "get_weather",
            description: "Current weather",
            input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
          }],
          tool_choice: { type: "auto" },
          stop_sequences: ["END"],
          metadata: { user_id: "u-1" },
          ...samplingParameters
        })
    )
    expect(request.path).toBe("/provider_b/eu/v1/messages")
    const decoded = decodeOrFail(MessagesRequest, request.body)
    expect(decoded.tools?.[0]?.name).toBe("get_weather")
    expect(decoded.temperature).toBe(0.3)
    expect(decoded.top_k).toBe(40)
    expect(result.content[1]).toEqual({ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } })
  })

  it("the client's stream helper accepts the stream event shapes", async () => {
    for (const event of streamFixture) {
      expect(Schema.decodeUnknownSync(MessageStreamEvent)(event)).toEqual(event)
    }
    const { request, result } = await captureRequest(
      { contentType: "text/event-stream", body: namedEventSse(streamFixture) },
      (origin) =>
        client(origin).messages.stream({
          model: "assistantmodel-sonnet-4-5-20250929",
          max_tokens: 64,
          messages: [{ role: "user", content: "Say hello" }]
        }).finalMessage()
    )
    expect(decodeOrFail(MessagesRequest, request.body).stream).toBe(true)
    expect(result.content[0]).toMatchObject({ type: "text", text: "Hello" })
    expect(result.content[1]).toMatchObject({ type: "tool_use", input: { a: 1 } })
    expect(result.stop_reason).toBe("tool_use")
    expect(result.usage.output_tokens).toBe(9)
  })

  it("the client reads type and message from the error body", async () => {
    const errorBody: ProviderBErrorBody = {
      type: "error",
      error: { type: "invalid_request_error", message: "max_tokens: Missing required parameter: 'max_tokens'." },
      request_id: "req_1"
    }
    expect(Schema.decodeUnknownSync(ProviderBErrorBody)(errorBody)).toEqual(errorBody)
    const { result: failure } = await captureRequest(
      { status: 400, contentType: "application/json", body: JSON.stringify(errorBody) },
      (origin) =>
        client(origin).messages.create({
          model: "assistantmodel-sonnet-4-5-20250929",
          max_tokens: 1,
          messages: [{ role: "user", content: "x" }]
        }).then(() => undefined, (error: unknown) => error)
    )
    expect(failure).toBeInstanceOf(ProviderBClient.BadRequestError)
    if (failure instanceof ProviderBClient.BadRequestError) {
      expect(failure.type).toBe("invalid_request_error")
      expect(failure.apiMessage).toBe(errorBody.error.message)
    }
  })
})
