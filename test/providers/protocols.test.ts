import { describe, expect, it } from "@effect/vitest"
import { billedOutputTokens, emptyTally, parseJson } from "../../src/providers/protocol"
import { trailingUsage } from "../../src/providers/largeAnswer"
import { embeddingsProtocol } from "../../src/providers/providerA/protocol"
import { messagesProtocol, providerBErrorType } from "../../src/providers/providerB/protocol"
import { fimProtocol, withFinishReason } from "../../src/providers/providerC/protocol"
import { namedEvent } from "../../src/domain/sse"

/** A named event as the SSE decoder yields it. */
const named = (name: string, payload: Record<string, unknown>) => ({ event: name, data: JSON.stringify({ type: name, ...payload }) })
const data = (payload: unknown) => ({ data: JSON.stringify(payload) })

describe("messages protocol (provider_b)", () => {
  it("reads usage from a Message, counting cached input as input", () => {
    const message = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "hi" }],
      usage: { input_tokens: 10, cache_creation_input_tokens: 5, cache_read_input_tokens: 2, output_tokens: 7 }
    }
    expect(messagesProtocol.usageOfBody(message)).toEqual({ inputTokens: 17, outputTokens: 7 })
    expect(messagesProtocol.usageOfBody({ ...message, usage: { input_tokens: 3, output_tokens: 1, cache_read_input_tokens: null } }))
      .toEqual({ inputTokens: 3, outputTokens: 1 })
  })

  it("refuses answers that are not Messages", () => {
    expect(messagesProtocol.usageOfBody({ hello: "world" })).toBeUndefined()
    expect(messagesProtocol.usageOfBody({ type: "message", content: [] })).toBeUndefined()
    expect(messagesProtocol.usageOfBody(undefined)).toBeUndefined()
  })

  it("tallies a stream: input from message_start, generated text and tool input, cumulative output from message_delta", () => {
    const tally = emptyTally(99)
    const events = [
      named("message_start", { message: { content: [], usage: { input_tokens: 20, output_tokens: 1 } } }),
      named("ping", {}),
      named("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      named("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hello" } }),
      named("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: "{\"a\":1}" } }),
      named("content_block_delta", { index: 2, delta: { type: "thinking_delta", thinking: "hmm" } }),
      named("content_block_stop", { index: 0 })
    ]
    for (const event of events) expect(messagesProtocol.observe(event, tally)).toBe(true)
    expect(tally).toMatchObject({ inputTokens: 20, generatedChars: 5 + 7 + 3, reportedOutput: false })
    // Cut here, output is estimated from the text: about four characters a token.
    expect(billedOutputTokens(tally)).toBe(4)
    expect(messagesProtocol.observe(named("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 12 } }), tally)).toBe(true)
    expect(messagesProtocol.observe(named("message_stop", {}), tally)).toBe(true)
    expect(billedOutputTokens(tally)).toBe(12)
    expect(tally.inputTokens).toBe(20)
  })

  it("relays event names it does not know, and refuses malformed events", () => {
    const tally = emptyTally(0)
    expect(messagesProtocol.observe(named("some_future_event", { x: 1 }), tally)).toBe(true)
    expect(messagesProtocol.observe({ event: "content_block_delta", data: "{\"type\":\"content_block_delta\",\"delta\":" }, tally)).toBe(false)
    expect(messagesProtocol.observe({ data: JSON.stringify({ type: "ping" }) }, tally)).toBe(false)
    expect(messagesProtocol.observe(named("message_start", { message: {} }), tally)).toBe(false)
    expect(messagesProtocol.observe(named("message_delta", { delta: {} }), tally)).toBe(false)
    expect(tally.upstreamError).toBeUndefined()
  })

  it("takes the upstream's in-band error as its own error, type and message kept", () => {
    const tally = emptyTally(0)
    const error = named("error", { error: { type: "overloaded_error", message: "Overloaded" } })
    expect(messagesProtocol.observe(error, tally)).toBe(false)
    expect(tally.upstreamError).toEqual({ status: 529, code: "overloaded_error", message: "Overloaded" })
    expect(messagesProtocol.streamError(tally.upstreamError!)).toBe(namedEvent("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }))

    const odd = emptyTally(0)
    messagesProtocol.observe(named("error", { error: { type: "toString", message: "?" } }), odd)
    expect(odd.upstreamError).toMatchObject({ status: 500, code: "api_error" })
  })

  it("writes its own failures as `event: error` with the type of their status", () => {
    expect(messagesProtocol.streamError({ status: 504, code: "upstream_timeout", message: "late" }))
      .toBe("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"timeout_error\",\"message\":\"late\"}}\n\n")
    expect(messagesProtocol.streamError({ status: 502, code: "upstream_malformed", message: "bad" })).toContain("\"type\":\"api_error\"")
  })

  it("keeps the upstream's message of a refusal; a body it cannot read gets a neutral one", () => {
    expect(messagesProtocol.upstreamProblem(400, JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "max_tokens: too big" } })))
      .toEqual({ status: 400, code: "invalid_request_error", message: "max_tokens: too big" })
    expect(messagesProtocol.upstreamProblem(429, "<html>busy</html>"))
      .toEqual({ status: 429, code: "upstream_error", message: "The upstream provider refused the request (status 429)." })
  })

  it("passes its own 529 through, and maps each status to the type its client library knows", () => {
    expect(messagesProtocol.passedServerStatuses).toEqual([529])
    const types = Object.fromEntries([400, 401, 402, 403, 404, 408, 413, 418, 422, 429, 500, 502, 503, 504, 529].map((s) => [s, providerBErrorType(s)]))
    expect(types).toEqual({
      400: "invalid_request_error",
      401: "authentication_error",
      402: "billing_error",
      403: "permission_error",
      404: "not_found_error",
      408: "timeout_error",
      413: "request_too_large",
      418: "invalid_request_error",
      422: "invalid_request_error",
      429: "rate_limit_error",
      500: "api_error",
      502: "api_error",
      503: "overloaded_error",
      504: "timeout_error",
      529: "overloaded_error"
    })
  })
})

const fimAnswer = {
  id: "c1",
  object: "chat.completion",
  model: "codemodel-2501",
  created: 1_700_000_000,
  usage: { prompt_tokens: 8, completion_tokens: 3, total_tokens: 11 },
  choices: [{ index: 0, message: { role: "assistant", content: "x", prefix: false }, finish_reason: "stop" }]
}

describe("FIM protocol (provider_c)", () => {
  it("reads usage from an answer the client library would accept", () => {
    expect(fimProtocol.usageOfBody(fimAnswer)).toEqual({ inputTokens: 8, outputTokens: 3 })
  })

  it.each([
    ["a null finish_reason", { ...fimAnswer, choices: [{ ...fimAnswer.choices[0], finish_reason: null }] }],
    ["a fractional created", { ...fimAnswer, created: 1.5 }],
    ["no usage", { ...fimAnswer, usage: undefined }],
    ["no id", { ...fimAnswer, id: undefined }],
    ["a choice without index", { ...fimAnswer, choices: [{ finish_reason: "stop" }] }]
  ])("takes an answer with %s as malformed", (_name, body) => {
    expect(fimProtocol.usageOfBody(body)).toBeUndefined()
  })

  it("tallies a stream: content characters, then the usage of the last chunk", () => {
    const tally = emptyTally(50)
    const chunk = (content: string, extra: Record<string, unknown> = {}) =>
      data({ id: "c", model: "codemodel-2501", choices: [{ index: 0, delta: { content }, finish_reason: null }], ...extra })
    expect(fimProtocol.observe(chunk("def "), tally)).toBe(true)
    expect(fimProtocol.observe(chunk("f():"), tally)).toBe(true)
    expect(tally).toMatchObject({ inputTokens: 50, generatedChars: 8, reportedOutput: false })
    expect(fimProtocol.observe(chunk("", { usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }), tally)).toBe(true)
    expect(fimProtocol.observe({ data: "[DONE]" }, tally)).toBe(true)
    expect(tally).toMatchObject({ inputTokens: 9, outputTokens: 2, reportedOutput: true })
    expect(fimProtocol.observe({ data: "{\"id\":" }, tally)).toBe(false)
    expect(fimProtocol.observe(data({ id: "c" }), tally)).toBe(false)
  })

  it("takes an error chunk as the upstream's own error and writes its in-band error in the FIM error format", () => {
    const tally = emptyTally(0)
    expect(fimProtocol.observe(data({ object: "error", message: "boom", type: "internal_server_error", param: null, code: "3000" }), tally)).toBe(false)
    expect(tally.upstreamError).toEqual({ status: 502, code: "3000", message: "boom" })
    expect(fimProtocol.streamError(tally.upstreamError!))
      .toBe("data: {\"object\":\"error\",\"message\":\"boom\",\"type\":\"server_error\",\"param\":null,\"code\":\"3000\"}\n\n")
  })

  it("reads the upstream's three error shapes", () => {
    expect(fimProtocol.upstreamProblem(400, JSON.stringify({ object: "error", message: "Invalid model: x", type: "invalid_model", param: null, code: "1500" })))
      .toEqual({ status: 400, code: "1500", message: "Invalid model: x", param: undefined })
    expect(fimProtocol.upstreamProblem(422, JSON.stringify({ detail: [{ type: "missing", loc: ["body", "stop", 1], msg: "Field required" }] })))
      .toEqual({ status: 422, code: "missing", message: "stop[1]: Field required", param: "stop[1]" })
    expect(fimProtocol.upstreamProblem(429, JSON.stringify({ message: "Requests rate limit exceeded", request_id: "r" })))
      .toEqual({ status: 429, code: "upstream_error", message: "Requests rate limit exceeded", param: undefined })
    expect(fimProtocol.upstreamProblem(400, "not json").message).toBe("The upstream provider refused the request (status 400).")
  })

  it("gives a streamed choice without a finish_reason key a null one, and leaves others untouched", () => {
    const missing = data({ id: "c", choices: [{ index: 0, delta: { content: "a" } }] })
    expect(JSON.parse(withFinishReason(missing).data)).toEqual({ id: "c", choices: [{ index: 0, delta: { content: "a" }, finish_reason: null }] })
    const present = data({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })
    expect(withFinishReason(present)).toBe(present)
    const done = { data: "[DONE]" }
    expect(withFinishReason(done)).toBe(done)
  })
})

describe("embeddings answers read for usage without parsing the vectors", () => {
  const vectors = (count: number) => Array.from({ length: count }, (_, i) => ({ object: "embedding", index: i, embedding: Array.from({ length: 1536 }, (_, j) => ((i + j) % 7) / 7 - 0.5) }))
  const answer = (members: Record<string, unknown>) => JSON.stringify({ object: "list", data: vectors(2), model: "text-embedding-ada-002", ...members })
  const bytes = (text: string) => Buffer.from(text, "utf8")
  const large = (text: string) => embeddingsProtocol.usageOfLargeAnswer!(bytes(text))

  it("reads the usage that ends the answer, as a full parse would", () => {
    const text = answer({ usage: { prompt_tokens: 12, total_tokens: 12 } })
    expect(text.length).toBeGreaterThan(16 * 1024)
    expect(large(text)).toEqual({ inputTokens: 12, outputTokens: 0 })
    expect(large(text)).toEqual(embeddingsProtocol.usageOfBody(JSON.parse(text)))
    expect(large(`${JSON.stringify(JSON.parse(text), null, 2)}\n`)).toEqual({ inputTokens: 12, outputTokens: 0 })
  })

  it("leaves to the full parse what it cannot read from the tail", () => {
    // Usage not last, cut-off answers, no list, usage that is no object: undefined, so the whole answer is parsed.
    const usageFirst = JSON.stringify({ usage: { prompt_tokens: 3, total_tokens: 3 }, object: "list", data: vectors(1) })
    expect(large(usageFirst)).toBeUndefined()
    const full = answer({ usage: { prompt_tokens: 12, total_tokens: 12 } })
    expect(large(full.slice(0, -1))).toBeUndefined()
    expect(large(full.slice(2000))).toBeUndefined()
    expect(large(JSON.stringify({ object: "list", items: vectors(1), usage: { prompt_tokens: 1 } }))).toBeUndefined()
    expect(trailingUsage(bytes('{"data":[],"usage":null}'))).toBeUndefined()
    expect(trailingUsage(bytes('{"data":[],"usage":{"prompt_tokens":1}} trailing'))).toBeUndefined()
    expect(trailingUsage(bytes('{"data":[],"usage":{"prompt_tokens":1}}'))).toEqual({ prompt_tokens: 1 })
  })

  // The reading of the answer's decoded text that the byte reading replaced, kept here as the reference.
  const textReading = (text: string) => {
    const end = text.trimEnd()
    if (!end.startsWith("{")) return undefined
    const key = end.lastIndexOf('"usage"')
    const open = key === -1 ? -1 : end.indexOf("{", key)
    const close = open === -1 ? -1 : end.indexOf("}", open)
    if (close === -1 || end.slice(key + 7, open).trim() !== ":" || end.slice(close + 1).trim() !== "}") return undefined
    const usage: unknown = (() => {
      try {
        return JSON.parse(end.slice(open, close + 1))
      } catch {
        return undefined
      }
    })()
    return typeof usage === "object" && usage !== null && !Array.isArray(usage) &&
        /^\{\s*"(object|data)"/.test(text.trimStart()) && /"data"\s*:\s*\[/.test(text)
      ? { inputTokens: typeof (usage as Record<string, unknown>).prompt_tokens === "number" ? (usage as Record<string, number>).prompt_tokens : 0, outputTokens: 0 }
      : undefined
  }

  it("accepts exactly the answers the reading of their text accepted, with the same usage", () => {
    // A seeded generator of answers near the protocol's shape: members in any order, JSON whitespace anywhere,
    // keys in strings, cut or changed at random places.
    let seed = 7
    const random = (n: number) => {
      // xorshift32
      seed ^= seed << 13
      seed ^= seed >>> 17
      seed ^= seed << 5
      return (seed >>> 0) % n
    }
    const pick = <A>(items: ReadonlyArray<A>): A => items[random(items.length)]!
    const space = () => pick(["", "", " ", "\n", "\t", "\r\n  ", "\u000b", "\f"])
    const vector = JSON.stringify(vectors(1)[0])
    const list = () => pick(["[]", "[1,2]", `[${vector}]`, '{"a":1}', '"x"', '["data": [', "[{]"])
    const usage = () => pick(['{"prompt_tokens":3}', '{ "prompt_tokens" : 5, "total_tokens": 5 }', "{}", "null", "[1]", '{"prompt_tokens":"3"}', "{", '{"a":{"b":1}}'])
    const member = () =>
      pick([
        () => `"object"${space()}:${space()}"list"`,
        () => `"data"${space()}:${space()}${list()}`,
        () => `"model"${space()}:${space()}"m\u00e9 \\"data\\": ["`,
        () => `"usage"${space()}:${space()}${usage()}`
      ])()
    // Half the answers are of the protocol's shape (a first member, a list, the usage last), half of any members.
    const members = () =>
      random(2) === 0
        ? [pick([`"object":"list"`, `"data"${space()}:${space()}${list()}`]), `"data":${space()}[${vector}]`, ...Array.from({ length: random(3) }, member), `"usage"${space()}:${space()}${usage()}`]
        : Array.from({ length: 1 + random(4) }, member)
    const candidate = () => {
      const text = `${pick(["{", "{", "{", " {", "["])}${space()}${members().join(`${space()},${space()}`)}${space()}${pick(["}", "}", "}", "}}", "", "} x"])}${space()}`
      const cut = random(5) === 0 ? text.slice(0, random(text.length + 1)) : text
      if (random(3) !== 0 || cut.length === 0) return cut
      const at = random(cut.length)
      return cut.slice(0, at) + pick(["{", "}", "[", ":", '"', " ", "é", ""]) + cut.slice(at + 1)
    }
    let accepted = 0
    for (let round = 0; round < 10_000; round++) {
      const text = candidate()
      const expected = textReading(text)
      if (expected !== undefined) accepted++
      expect(large(text), text).toEqual(expected)
    }
    expect(accepted).toBeGreaterThan(500)
  })

  it("leaves to the full parse an answer framed with spaces JSON does not allow, which it refuses", () => {
    // The text's trim and \s took Unicode spaces; the bytes take JSON's (and \v, \f): such an answer is not JSON.
    const text = `{\u00a0"object":"list","data":[],"usage":{"prompt_tokens":1}}`
    expect(textReading(text)).toEqual({ inputTokens: 1, outputTokens: 0 })
    expect(large(text)).toBeUndefined()
    expect(embeddingsProtocol.usageOfBody(parseJson(text))).toBeUndefined()
  })
})
