import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { boundedSseDecoder, dataEvent, decodeSse, encodedEvents, encodeSseEvent, isEncodedEvents, namedEvent, sseDecoder, utf8Pieces } from "../../src/domain/sse"

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

describe("boundedSseDecoder against the parser alone", () => {
  // Pieces of streams, well-formed or not: the scan must give what eventsource-parser gives, feed by feed.
  const pieces = [
    "data: x\n\n", "event: a\ndata: {\"b\":1}\n\n", ": ping\n\n", "data: a\ndata: b\n\n", "\r\n", "\ufeff", "\ufeffdata: m\n\n",
    "id: 1\n", "event: \ndata: z\n\n", "data:q\n\n", "data: é€😀\n\n", "retry: 5\n", "\n", "data: p\r\n\r\n", "event: e\n",
    "data: \n\n", "event:  spaced\ndata: s\n\n", "data: r\r", "nonsense\n", "data: [DONE]\n\n",
    // What the parser takes for a mark at the start of its first text (the mark's bytes read as Latin-1).
    "\u00ef\u00bb\u00bfdata: n\n\n"
  ]
  const random = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
  const plain = (events: ReadonlyArray<{ readonly event?: string | undefined; readonly data: string }>) =>
    events.map(({ data, event }) => (event === undefined ? { data } : { event, data }))

  it("gives the same events for every feed, whatever the text and its cuts", () => {
    const next = random(26)
    for (let round = 0; round < 3000; round++) {
      let text = ""
      const count = 1 + Math.floor(next() * 8)
      for (let i = 0; i < count; i++) text += pieces[Math.floor(next() * pieces.length)]
      const encoded = new TextEncoder().encode(text)
      const cuts = [0]
      for (let at = 0; at < encoded.length;) {
        at = next() < 0.3 ? encoded.length : Math.min(encoded.length, at + 1 + Math.floor(next() * 40))
        cuts.push(at)
      }
      const bounded = boundedSseDecoder(1 << 20)
      const reference = sseDecoder()
      for (let i = 1; i < cuts.length; i++) {
        const bytes = encoded.slice(cuts[i - 1], cuts[i])
        const events = bounded.feed(bytes) ?? []
        expect(plain(events), JSON.stringify({ text, cuts })).toEqual(plain(reference.feed(bytes)))
        const asFed = bounded.fedAsEncoded()
        if (asFed !== undefined) expect(asFed).toBe(encodedEvents(events, events.length))
      }
    }
  })
})

describe("utf8Pieces", () => {
  it("gives TextDecoder's streaming text for every piece, invalid bytes and marks included", () => {
    const next = (() => {
      let seed = 7
      return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    })()
    const parts = [[0x61], [0x0a], [0xc3, 0xa9], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x98, 0x80], [0xef, 0xbb, 0xbf], [0x80], [0xc3], [0xe2, 0x82], [0xf0, 0x9f], [0xff], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]
    for (let round = 0; round < 5000; round++) {
      const bytes: Array<number> = []
      const count = 1 + Math.floor(next() * 12)
      for (let i = 0; i < count; i++) bytes.push(...parts[Math.floor(next() * parts.length)]!)
      // Piece by piece: Node's streaming decoder, the stream's leading mark dropped as the Encoding standard says.
      // (Node 24's own mark handling in streaming mode also drops a second U+FEFF after a first one cut between
      // pieces, which the standard keeps: the whole text is checked against the non-streaming decode below.)
      const reference = new TextDecoder("utf-8", { ignoreBOM: true })
      let started = false
      const pieces = utf8Pieces()
      let whole = ""
      for (let at = 0; at < bytes.length;) {
        const end = Math.min(bytes.length, at + 1 + Math.floor(next() * 6))
        const piece = Uint8Array.from(bytes.slice(at, end))
        let expected = reference.decode(piece, { stream: true })
        if (!started && expected !== "") {
          started = true
          if (expected.charCodeAt(0) === 0xfeff) expected = expected.slice(1)
        }
        const text = pieces(piece)
        expect(text, JSON.stringify({ bytes, at, end })).toBe(expected)
        whole += text
        at = end
      }
      expect(whole + reference.decode(), JSON.stringify({ bytes })).toBe(new TextDecoder().decode(Uint8Array.from(bytes)))
    }
  })
})
