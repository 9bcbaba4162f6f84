import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { dataEvent, decodeSse, encodeSseEvent, namedEvent } from "../../src/domain/sse"

const bytes = (text: string, cut: ReadonlyArray<number>) => {
  const encoded = new TextEncoder().encode(text)
  const bounds = [0, ...cut, encoded.length]
  return Stream.fromIterable(bounds.slice(1).map((end, i) => encoded.slice(bounds[i], end)))
}

const decode = (text: string, cut: ReadonlyArray<number>) => Effect.map(Stream.runCollect(decodeSse(bytes(text, cut))), Chunk.toArray)

describe("SSE codec", () => {
  const stream = `${namedEvent("message_start", { a: "é" })}: keep-alive\n\n${dataEvent({ b: 1 })}event: ping\r\ndata: {}\r\n\r\ndata: line1\ndata: line2\n\ndata: [DONE]\n\n`
  const expected = [
    { event: "message_start", data: '{"a":"é"}' },
    { data: '{"b":1}' },
    { event: "ping", data: "{}" },
    { data: "line1\nline2" },
    { data: "[DONE]" }
  ]

  it.effect("decodes events whatever the chunk boundaries, multi-byte characters included", () =>
    Effect.gen(function*() {
      const length = new TextEncoder().encode(stream).length
      for (const cut of [[], [1], [17], [18, 19, 20], Array.from({ length: length - 1 }, (_, i) => i + 1)]) {
        expect(yield* decode(stream, cut)).toEqual(expected)
      }
    }))

  it.effect("drops a last event that never got its blank line", () =>
    Effect.map(decode("data: 1\n\ndata: 2\n", []), (events) => expect(events).toEqual([{ data: "1" }])))

  it("encodes decoded events back to the same framing", () => {
    expect(encodeSseEvent({ event: "x", data: "a\nb" })).toBe("event: x\ndata: a\ndata: b\n\n")
    expect(encodeSseEvent({ data: '{"b":1}' })).toBe(dataEvent({ b: 1 }))
  })
})
