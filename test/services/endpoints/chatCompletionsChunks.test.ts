import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { usageDrops, withoutNullUsage, withoutUsage } from "../../../src/services/endpoints/ChatCompletions"
import { boundedSseDecoder, encodeSseEvent, noDrops, relayedChunk, type SseEvent } from "../../../src/domain/sse"

const chunk = (members: string) => `{"id":"c1","object":"chat.completion.chunk",${members}}`

describe("chunks for a client that did not ask for usage", () => {
  it("lose their usage member wherever it stands, and nothing else", () => {
    const choices = '"choices":[{"index":0,"delta":{"content":"say \\",\\"usage\\":null"},"finish_reason":null}]'
    expect(withoutNullUsage(chunk(`${choices},"usage":null`))).toBe(chunk(choices))
    expect(withoutNullUsage(chunk(`"usage":null,${choices}`))).toBe(chunk(choices))
    expect(withoutNullUsage(chunk(`${choices},"usage":null,"system_fingerprint":"fp"`))).toBe(chunk(`${choices},"system_fingerprint":"fp"`))
    expect(withoutNullUsage(chunk(choices))).toBe(chunk(choices))
    // A member whose name only starts like it stays.
    expect(withoutNullUsage(chunk(`${choices},"usage":nullish`))).toBe(chunk(`${choices},"usage":nullish`))
    for (const text of [chunk(`${choices},"usage":null`), chunk(`"usage":null,${choices}`)]) {
      expect(JSON.parse(withoutNullUsage(text))).not.toHaveProperty("usage")
    }
  })

  it("lose a trailing null usage, as most chunks end", () => {
    const choices = '"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]'
    expect(withoutUsage({ data: chunk(`${choices},"usage":null`) })).toEqual({ data: chunk(choices) })
    expect(withoutUsage({ event: "x", data: chunk(`"usage":null,${choices}`) })).toEqual({ event: "x", data: chunk(choices) })
  })

  it("drop the usage-only chunk and pass [DONE] and chunks without usage as they are", () => {
    expect(withoutUsage({ data: chunk('"choices":[],"usage":{"prompt_tokens":1}') })).toBeUndefined()
    expect(withoutUsage({ data: "[DONE]" })).toEqual({ data: "[DONE]" })
    const plain = { data: chunk('"choices":[]') }
    expect(withoutUsage(plain)).toBe(plain)
  })
})

/** The events as the per-event relay sends them: each through withoutUsage, encoded. */
const perEvent = (events: ReadonlyArray<SseEvent>): string =>
  events.map(withoutUsage).map((event) => (event === undefined ? "" : encodeSseEvent(event))).join("")

const choices = '"choices":[{"index":0,"delta":{"content":"hé \\",\\"usage\\":null 🙂"},"finish_reason":null}]'
const asciiChoices = '"choices":[{"index":0,"delta":{"content":"say \\",\\"usage\\":null"},"finish_reason":null}]'
const toolCall = '"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":1}"}}]},"finish_reason":null}]'
/** Chunks of every shape a chat stream has, the null usage anywhere it can stand, and a few that are not JSON. */
const datas = [
  chunk(`${choices},"usage":null`),
  chunk(`${asciiChoices},"usage":null`),
  chunk(`${asciiChoices},"usage":null`),
  chunk(`"usage":null,${choices}`),
  chunk(`"usage":null,${asciiChoices}`),
  chunk(`${choices},"usage":null,"system_fingerprint":"fp"`),
  chunk(`${toolCall},"usage":null`),
  chunk(`"usage":null,${toolCall}`),
  chunk(choices),
  chunk(`${choices},"usage":nullish`),
  chunk('"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":20,"total_tokens":23}'),
  chunk('"choices":[],"usage":null'),
  "[DONE]",
  "",
  "a\nb"
]

describe("a chunk relayed without usage", () => {
  it("is, byte for byte, what relaying and encoding each of its events gives, however the stream is cut", () => {
    const stream = fc.array(
      fc.record({ data: fc.constantFrom(...datas), event: fc.option(fc.constantFrom("x", "chunk"), { nil: undefined, freq: 4 }) }),
      { minLength: 1, maxLength: 12 }
    )
    let asText = 0
    let asBytes = 0
    fc.assert(
      // Cuts between events (whole events a feed, several or one) and anywhere (events split across feeds).
      fc.property(stream, fc.array(fc.tuple(fc.boolean(), fc.nat()), { maxLength: 8 }), (events, cuts) => {
        const encoded = events.map((event) => Buffer.from(encodeSseEvent(event)))
        const bytes = Buffer.concat(encoded)
        const between: Array<number> = []
        encoded.reduce((offset, event) => (between.push(offset), offset + event.length), 0)
        const at = [...new Set(cuts.map(([whole, cut]) => (whole ? between[cut % between.length]! : cut % bytes.length)))]
          .filter((cut) => cut > 0)
          .sort((a, b) => a - b)
        const decoder = boundedSseDecoder(1 << 20)
        let sent = ""
        for (const [index, from] of [0, ...at].entries()) {
          const fedBytes = bytes.subarray(from, at[index] ?? bytes.length)
          const fedEvents = decoder.feed(fedBytes) ?? []
          const fed = decoder.fedAsEncoded()
          const expected = perEvent(fedEvents)
          if (fed !== undefined) {
            const relayed = relayedChunk(fed, fedBytes, usageDrops(fedEvents))
            // The upstream's bytes, less the cuts, exactly when they are the text: all ASCII, nothing carried in.
            const ascii = [...fedBytes].every((byte) => byte < 0x80) && fed.length === fedBytes.length
            expect(typeof relayed === "string").toBe(!ascii)
            if (typeof relayed === "string") {
              asText++
              expect(relayed).toBe(expected)
            } else {
              asBytes++
              expect(relayed.equals(Buffer.from(expected))).toBe(true)
            }
          }
          sent += expected
        }
        expect(sent).toBe(perEvent(events.map((event) => (event.event === undefined ? { data: event.data } : event))))
      }),
      { numRuns: 2000 }
    )
    // Many feeds are whole events: both forms were tested.
    expect(asText).toBeGreaterThan(500)
    expect(asBytes).toBeGreaterThan(500)
  })

  it("is the chunk itself, not a copy, when no event changes", () => {
    const text = `data: ${chunk(asciiChoices)}\n\ndata: [DONE]\n\n`
    const bytes = Buffer.from(text)
    expect(usageDrops([{ data: chunk(asciiChoices) }, { data: "[DONE]" }])).toBe(noDrops)
    expect(relayedChunk(text, bytes, noDrops)).toBe(bytes)
    // Its text when its bytes are not the text's one for one.
    const wide = `data: ${chunk(choices)}\n\n`
    expect(relayedChunk(wide, Buffer.from(wide), noDrops)).toBe(wide)
  })

  it("drops the usage chunk and the null usage members, the upstream's bytes less those ranges", () => {
    const events = [
      { data: chunk(`${asciiChoices},"usage":null`) },
      { data: chunk('"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":20,"total_tokens":23}') },
      { data: "[DONE]" }
    ]
    const text = events.map(encodeSseEvent).join("")
    const relayed = relayedChunk(text, Buffer.from(text), usageDrops(events))
    expect(Buffer.isBuffer(relayed) && relayed.toString()).toBe(`data: ${chunk(asciiChoices)}\n\ndata: [DONE]\n\n`)
  })
})
