import { describe, expect, it } from "@effect/vitest"
import { billedOutputTokens, emptyTally, parseJson } from "../../../src/providers/protocol"
import { responsesProtocol } from "../../../src/providers/providerA/responsesProtocol"

/** A named event as the SSE decoder yields it. */
const named = (name: string, payload: Record<string, unknown> = {}) => ({ event: name, data: JSON.stringify({ type: name, ...payload }) })

const usage = { input_tokens: 40, input_tokens_details: { cached_tokens: 0 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 4 }, total_tokens: 52 }

describe("Responses protocol (provider_a)", () => {
  it("reads usage from a response object, and refuses anything else", () => {
    expect(responsesProtocol.usageOfBody({ object: "response", status: "completed", output: [], usage })).toEqual({ inputTokens: 40, outputTokens: 12 })
    expect(responsesProtocol.usageOfBody({ object: "chat.completion", usage })).toBeUndefined()
    expect(responsesProtocol.usageOfBody([])).toBeUndefined()
  })

  it("tallies generated text and call arguments, then takes the terminal event's usage", () => {
    const tally = emptyTally(30)
    const events = [
      named("response.created", { response: { status: "in_progress", usage: null } }),
      named("response.output_item.added", { output_index: 0, item: { type: "message" } }),
      named("response.output_text.delta", { delta: "Hello there" }),
      named("response.function_call_arguments.delta", { delta: "{\"a\":1}" }),
      named("response.output_text.done", { text: "Hello there" })
    ]
    for (const event of events) expect(responsesProtocol.observe(event, tally)).toBe(true)
    // Cut here: the prompt as counted, the output from the text (about four characters a token).
    expect(tally).toMatchObject({ inputTokens: 30, generatedChars: 11 + 7, terminated: false })
    expect(billedOutputTokens(tally)).toBe(5)
    expect(responsesProtocol.observe(named("response.completed", { response: { status: "completed", usage } }), tally)).toBe(true)
    expect(tally).toMatchObject({ inputTokens: 40, outputTokens: 12, reportedOutput: true, terminated: true })
  })

  it("ends with response.incomplete and response.failed as well", () => {
    for (const terminal of ["response.incomplete", "response.failed"]) {
      const tally = emptyTally(1)
      expect(responsesProtocol.observe(named(terminal, { response: { usage } }), tally)).toBe(true)
      expect(tally.terminated, terminal).toBe(true)
      expect(billedOutputTokens(tally), terminal).toBe(12)
    }
  })

  it("takes the upstream's error event as its in-band error, and refuses events that are not typed JSON", () => {
    const tally = emptyTally(1)
    expect(responsesProtocol.observe(named("error", { code: "rate_limit_exceeded", message: "Slow down", param: null }), tally)).toBe(false)
    expect(tally.upstreamError).toMatchObject({ status: 429, code: "rate_limit_exceeded", message: "Slow down" })
    expect(responsesProtocol.observe({ data: "{\"delta\":\"x\"}" }, emptyTally(1))).toBe(false)
    expect(responsesProtocol.observe({ data: "not json" }, emptyTally(1))).toBe(false)
  })

  it("writes its in-band error as an error event the client library raises (its data has `error`)", () => {
    const text = responsesProtocol.streamError({ status: 502, code: "upstream_unavailable", message: "The upstream failed." })
    expect(text.startsWith("event: error\ndata: ")).toBe(true)
    const data = parseJson(text.slice("event: error\ndata: ".length).trim())
    expect(data).toEqual({
      type: "error",
      code: "upstream_unavailable",
      message: "The upstream failed.",
      param: null,
      error: { message: "The upstream failed.", type: "server_error", param: null, code: "upstream_unavailable" }
    })
  })
})
