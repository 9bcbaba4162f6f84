import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import ProviderAClient from "openai"
import { ResponseObject, ResponsesRequest } from "../../../src/providers/providerA/responsesWire"
import { captureRequest } from "../../api/schemas/captureServer"
import { decodeOrFail, issueOf } from "../../api/schemas/decodeHelpers"

const minimal = { model: "chatgen-4o", input: "Hello" }
const withFields = (fields: Record<string, unknown>) => ({ ...minimal, ...fields })

const responseFixture = {
  id: "resp_1",
  object: "response",
  created_at: 1_700_000_000,
  status: "completed",
  error: null,
  incomplete_details: null,
  model: "chatgen-4o",
  output: [{ type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hi", annotations: [] }] }],
  usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 6 },
  store: false
}

describe("ResponsesRequest", () => {
  it("decodes a minimal request and keeps only known fields", () => {
    expect(decodeOrFail(ResponsesRequest, { ...minimal, unknown_field: 1 })).toEqual(minimal)
  })

  it("decodes a conversation sent back whole: messages, calls, their outputs, carried reasoning, custom tools", () => {
    const body = withFields({
      instructions: "Be brief.",
      input: [
        { role: "developer", content: "Answer in French." },
        { type: "message", role: "user", content: [{ type: "input_text", text: "Weather?" }, { type: "input_image", image_url: "https://example.test/a.png", detail: "low" }] },
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAA…" },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "{\"celsius\":21}" },
        { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [{ type: "output_text", text: "Il fait beau.", annotations: [] }] },
        { type: "custom_tool_call", call_id: "call_2", name: "run_sql", input: "SELECT 1" },
        { type: "custom_tool_call_output", call_id: "call_2", output: "1" }
      ],
      tools: [
        { type: "function", name: "get_weather", parameters: { type: "object", properties: {} }, strict: true },
        { type: "custom", name: "run_sql", format: { type: "grammar", syntax: "lark", definition: "start: /.+/" } }
      ],
      tool_choice: { type: "function", name: "get_weather" },
      text: { format: { type: "json_schema", name: "weather", schema: { type: "object" }, strict: true }, verbosity: "low" },
      reasoning: { effort: "low", summary: "auto" },
      include: ["reasoning.encrypted_content"],
      metadata: { team: "a" },
      max_output_tokens: 512,
      store: false,
      stream: true
    })
    expect(decodeOrFail(ResponsesRequest, body)).toEqual(body)
  })

  it("refuses each field that needs state, each hosted tool and each bad value, naming the field", () => {
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string, RegExp]> = [
      [{ store: true }, "store", /stateless/],
      [{ previous_response_id: "resp_1" }, "previous_response_id", /stateless/],
      [{ conversation: { id: "conv_1" } }, "conversation", /stateless/],
      [{ background: true }, "background", /background/],
      [{ prompt: { id: "pmpt_1" } }, "prompt", /stored upstream/],
      [{ input: [{ type: "item_reference", id: "msg_1" }] }, "input[0].id", /stored upstream/],
      [{ input: [{ type: "web_search_call", id: "ws_1" }] }, "input[0].type", /hosted tools/],
      [{ input: [] }, "input", /at least one/],
      [{ input: 5 }, "input", /string or an array/],
      [{ tools: [{ type: "file_search" }] }, "tools[0].type", /file_search/],
      [{ tools: [{ type: "function", name: "has space" }] }, "tools[0].name", /letters, digits/],
      [{ tools: Array.from({ length: 129 }, (_, index) => ({ type: "function", name: `f${index}` })) }, "tools", /at most 128/],
      [{ tool_choice: "sometimes" }, "tool_choice", /tool_choice must be/],
      [{ text: { format: { type: "json_schema", name: "x" } } }, "text.format.schema", /schema/],
      [{ text: { format: { type: "json_schema", name: "x", schema: [] } } }, "text.format.schema", /JSON object/],
      [{ temperature: 2.1 }, "temperature", /between 0 and 2/],
      [{ top_p: 1.5 }, "top_p", /between 0 and 1/],
      [{ top_logprobs: 21 }, "top_logprobs", /between 0 and 20/],
      [{ max_output_tokens: 15 }, "max_output_tokens", /16/],
      [{ reasoning: { effort: "extreme" } }, "reasoning.effort", /one of/],
      [{ include: ["file_search_call.results"] }, "include[0]", /one of/],
      [{ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, "v"])) }, "metadata", /16/],
      [{ stream: "yes" }, "stream", /boolean/]
    ]
    for (const [fields, param, message] of cases) {
      const issue = issueOf(ResponsesRequest, withFields(fields))
      expect(issue, param).not.toBe("ok")
      if (issue === "ok") continue
      expect(issue.param, JSON.stringify(fields).slice(0, 80)).toBe(param)
      expect(issue.message, param).toMatch(message)
    }
  })

  it("decodes what the library's responses.create sends, and the library reads a response object", async () => {
    expect(Schema.decodeUnknownSync(ResponseObject)(responseFixture)).toMatchObject({ id: "resp_1" })
    const { request, result } = await captureRequest(
      { contentType: "application/json", body: JSON.stringify(responseFixture) },
      (origin) =>
        new ProviderAClient({ baseURL: `${origin}/v1`, apiKey: "k", maxRetries: 0 }).responses.create({
          model: "chatgen-4o",
          input: [{ role: "user", content: "Hi" }],
          tools: [{ type: "function", name: "f", parameters: { type: "object", properties: {} }, strict: true }],
          store: false
        })
    )
    expect(request.path).toBe("/v1/responses")
    expect(issueOf(ResponsesRequest, request.body)).toBe("ok")
    expect(result.output_text).toBe("Hi")
  })
})
