// Server-sent events as the providers write them, and a decoder for relaying upstream streams.
import { isAscii } from "node:buffer"
import { createParser, type EventSourceParser } from "eventsource-parser"
import { Chunk, Stream } from "effect"

/** TextDecoder's option for a stream's pieces, made once. */
const decodeStreaming = { stream: true }

/** Decodes a whole text (no stream option): it keeps nothing between calls, so every stream shares it. */
const wholeText = new TextDecoder("utf-8", { ignoreBOM: true })

/**
 * A stream's pieces as text, as TextDecoder's streaming decode gives them (the mark at the stream's start dropped),
 * decoded whole where that gives the same text: nothing of a character held from the last piece and nothing left of
 * one in this (its last byte ASCII). Node decodes a stream through ICU, several times slower than a whole text.
 */
export const utf8Pieces = (): (bytes: Uint8Array) => string => {
  // Made at the first piece that needs it (a character cut between pieces): most streams never do.
  let streaming: InstanceType<typeof TextDecoder> | undefined
  let held = false
  let started = false
  return (bytes) => {
    if (bytes.length === 0) return ""
    const last = bytes[bytes.length - 1]!
    let text = !held && last < 0x80
      ? wholeText.decode(bytes)
      : (streaming ??= new TextDecoder("utf-8", { ignoreBOM: true })).decode(bytes, decodeStreaming)
    held = last >= 0x80
    if (!started && text !== "") {
      started = true
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    }
    return text
  }
}

/** A data-only event (`data: <json>`), as chat-completion and FIM streams use. */
export const dataEvent = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`

/** A named event (`event: <name>` + `data: <json>`), as messages streams use. */
export const namedEvent = (name: string, payload: unknown): string =>
  `event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`

/** The terminator of data-only streams. */
export const doneEvent = "data: [DONE]\n\n"

/** One decoded event: its name (absent for data-only events) and its data lines joined by "\n". */
export interface SseEvent {
  readonly event?: string | undefined
  readonly data: string
}

/** Writes a decoded event back in the same framing. */
export const encodeSseEvent = ({ data, event }: SseEvent): string =>
  `${event === undefined ? "" : `event: ${event}\n`}${
    // Providers send one data line per event: the split is only for the rare multi-line one.
    data.includes("\n") ? data.split("\n").map((line) => `data: ${line}`).join("\n") : `data: ${data}`
  }\n\n`

/** The first `count` events as encodeSseEvent writes them. */
export const encodedEvents = (events: ReadonlyArray<SseEvent>, count: number): string => {
  let text = ""
  for (let index = 0; index < count; index++) text += encodeSseEvent(events[index]!)
  return text
}

/** What is dropped of a chunk whose events all pass unchanged. */
export const noDrops: ReadonlyArray<number> = []

/**
 * A relayed chunk: its text less the ranges dropped of it (start and end pairs, in order). When the upstream's bytes
 * are that text (all ASCII, as many: nothing of a character carried in) they are what is sent, less those ranges,
 * copied once: the socket takes bytes as they are, where a text (a string of slices at that) is flattened and
 * encoded again. Nothing dropped: the bytes themselves, or the text.
 */
export const relayedChunk = (text: string, bytes: Buffer, drops: ReadonlyArray<number>): string | Buffer => {
  const asBytes = text.length === bytes.length && isAscii(bytes)
  if (drops.length === 0) return asBytes ? bytes : text
  if (!asBytes) {
    let kept = ""
    let from = 0
    for (let index = 0; index < drops.length; index += 2) {
      kept += text.slice(from, drops[index])
      from = drops[index + 1]!
    }
    return kept + text.slice(from)
  }
  // One copy of the bytes, each kept range then moved up over what is dropped before it.
  const kept = Buffer.from(bytes)
  let at = drops[0]!
  for (let index = 1; index < drops.length; index += 2) {
    const to = drops[index + 1] ?? bytes.length
    kept.copyWithin(at, drops[index]!, to)
    at += to - drops[index]!
  }
  return kept.subarray(0, at)
}

/** Decodes bytes into events as they complete; keeps what an unfinished event has so far. */
export interface SseDecoder {
  readonly feed: (bytes: Uint8Array) => ReadonlyArray<SseEvent>
}

/**
 * Decodes events whatever the chunk boundaries (any of the three line endings, comments dropped).
 * A trailing event without its blank line is never completed, as the client libraries do.
 */
export const sseDecoder = (): SseDecoder => {
  const text = new TextDecoder()
  let pending: Array<SseEvent> = []
  const parser = createParser({
    onEvent: (message) => void pending.push(message.event === undefined ? { data: message.data } : { event: message.event, data: message.data })
  })
  return {
    feed: (bytes) => {
      parser.feed(text.decode(bytes, decodeStreaming))
      const events = pending
      pending = []
      return events
    }
  }
}

/**
 * Splits `text` into the events encodeSseEvent writes (`event: <name>\n` with a name, one `data: <data>\n`, the blank
 * line; no comment, id or carriage return), as eventsource-parser would give them, from its start up to the first
 * text that is not one: the events and where that text begins (`text.length` when all of it is). One index scan.
 */
export const leadingEncodedEvents = (text: string): { readonly events: Array<SseEvent>; readonly end: number } => {
  const events: Array<SseEvent> = []
  // A carriage return ends a line wherever it is: such text is left to the parser whole.
  if (text.includes("\r")) return { events, end: 0 }
  let at = 0
  // The last name read: a stream repeats its names (content_block_delta), kept rather than cut again.
  let name = ""
  while (at < text.length) {
    let dataAt = at
    let event: string | undefined
    if (text.startsWith("event: ", at)) {
      const end = text.indexOf("\n", at)
      // A name, then the data line; an empty name is no name (the event is then written without it).
      if (end === -1 || end === at + 7) break
      if (end - at - 7 !== name.length || !text.startsWith(name, at + 7)) name = text.slice(at + 7, end)
      event = name
      dataAt = end + 1
    }
    if (!text.startsWith("data: ", dataAt)) break
    const end = text.indexOf("\n", dataAt)
    if (end === -1 || text.charCodeAt(end + 1) !== 10) break
    const data = text.slice(dataAt + 6, end)
    events.push(event === undefined ? { data } : { event, data })
    at = end + 2
  }
  return { events, end: at }
}

/**
 * Where `text` is a run of whole events each written exactly as encodeSseEvent writes them: relayed unchanged, such
 * text is their encoding.
 */
export const isEncodedEvents = (text: string): boolean => leadingEncodedEvents(text).end === text.length

/** Decodes an untrusted stream's events (see boundedSseDecoder). */
export interface BoundedSseDecoder {
  /** The events completed by these bytes; undefined once an event has grown past the bound. */
  readonly feed: (bytes: Uint8Array) => ReadonlyArray<SseEvent> | undefined
  /**
   * The text of the last feed when it was exactly the events it completed, as encodeSseEvent writes them (nothing
   * carried in from before it, nothing left over): relayed unchanged, those events are that text. Answered once a
   * feed (undefined when asked again), so that the text is not kept while the stream waits.
   */
  readonly fedAsEncoded: () => string | undefined
}

/**
 * As sseDecoder, for an untrusted stream: `feed` answers undefined once an event (or a line that
 * never ends) has grown past maxEventBytes, rather than buffering it without limit. Counted in
 * bytes fed since the last complete event (comments do not count as one: they could be interleaved
 * with the data lines of an event that never ends), so the bound is loose by one chunk.
 */
export const boundedSseDecoder = (maxEventBytes: number): BoundedSseDecoder => {
  const decode = utf8Pieces()
  // The events of the feed under way, which the parser adds to.
  let pending: Array<SseEvent> = []
  let sinceBoundary = 0
  // Whether the text fed so far ends between events (nothing of an event pending in the parser).
  let between = true
  // Whether anything was fed: a parser made after that does not take a byte order mark at its text's start for one.
  let fedBefore = false
  let asEncoded: string | undefined
  // Made at the first text the scan leaves (most streams are all whole events as encodeSseEvent writes them).
  let parser: EventSourceParser | undefined
  return {
    feed: (bytes) => {
      sinceBoundary += bytes.length
      const fed = decode(bytes)
      // Between events, the whole events the text opens with are split here in one scan (the parser would find the
      // same); the parser is fed only what follows them, from a boundary, so it is in the same state after.
      const leading = between ? leadingEncodedEvents(fed) : undefined
      const events = leading === undefined ? [] : leading.events
      const rest = leading === undefined ? 0 : leading.end
      if (rest < fed.length) {
        pending = events
        if (parser === undefined) {
          parser = createParser({ onEvent: (message) => void pending.push(message) })
          // Not its stream's first text (text came before, or the scan stopped past the start): a mark is no mark.
          if (fedBefore || rest > 0) parser.feed("")
        }
        parser.feed(fed.slice(rest))
      }
      fedBefore = true
      asEncoded = fed !== "" && leading !== undefined && rest === fed.length ? fed : undefined
      // A text that ends with a blank line leaves the parser between events, whatever came before it.
      if (fed !== "") between = fed.endsWith("\n\n")
      if (events.length > 0) sinceBoundary = 0
      else if (sinceBoundary > maxEventBytes) return undefined
      return events
    },
    fedAsEncoded: () => {
      // Read once: the text is not kept past its relay (while the stream waits for its next chunk).
      const text = asEncoded
      asEncoded = undefined
      return text
    }
  }
}

/** A byte stream as the events it carries (see sseDecoder). */
export const decodeSse = <E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<SseEvent, E, R> =>
  Stream.suspend(() => {
    const decoder = sseDecoder()
    return Stream.mapChunks(bytes, (chunk) => {
      const events: Array<SseEvent> = []
      for (const piece of chunk) events.push(...decoder.feed(piece))
      return Chunk.unsafeFromArray(events)
    })
  })
