import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { boundedSseDecoder, dataEvent, decodeSse, encodedEvents, encodeSseEvent, isEncodedEvents, namedEvent } from "../../src/domain/sse"

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

  it("recognises text that is exactly its events' encoding", () => {
    expect(isEncodedEvents(`${namedEvent("a", { b: "é" })}${dataEvent({ c: 1 })}data: \n\ndata: [DONE]\n\n`)).toBe(true)
    for (
      const text of [
        "data:x\n\n", // no space: written back with one
        "event: \ndata: x\n\n", // an empty name is written back without the event line
        "data: a\ndata: b\n\n",
        ": comment\ndata: x\n\n",
        "id: 1\ndata: x\n\n",
        "data: x\r\n\r\n",
        "data: x\n\n\n",
        "data: x\n",
        "event: a\n\n",
        "\ufeffdata: x\n\n"
      ]
    ) expect(isEncodedEvents(text)).toBe(false)
  })

  it("gives a feed's own text only when it is exactly the events it completed", () => {
    const decoder = boundedSseDecoder(1024)
    const feed = (text: string) => {
      const events = decoder.feed(new TextEncoder().encode(text)) ?? []
      const asFed = decoder.fedAsEncoded()
      if (asFed !== undefined) expect(asFed).toBe(encodedEvents(events, events.length))
      return asFed
    }
    expect(feed("event: a\ndata: 1\n\ndata: 2\n\n")).toBe("event: a\ndata: 1\n\ndata: 2\n\n")
    expect(feed("data: 3\n\ndata: 4")).toBeUndefined()
    // The event carried from the last feed ends here: not this text alone.
    expect(feed("\n\n")).toBeUndefined()
    expect(feed("data: 5\n\n")).toBe("data: 5\n\n")
    expect(feed(": ping\n\n")).toBeUndefined()
    expect(feed("data: 6\n\n")).toBe("data: 6\n\n")
  })
})
