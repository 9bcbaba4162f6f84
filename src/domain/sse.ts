// Server-sent events as the providers write them, and a decoder for relaying upstream streams.
import { createParser } from "eventsource-parser"
import { Chunk, Stream } from "effect"

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
      parser.feed(text.decode(bytes, { stream: true }))
      const events = pending
      pending = []
      return events
    }
  }
}

/**
 * Where `text` is a run of whole events each written exactly as encodeSseEvent writes it (`event: <name>\n` with a
 * name, one `data: <data>\n`, the blank line; no comment, id or carriage return): relayed unchanged, such text is
 * their encoding. An index scan, nothing allocated: this runs for every chunk of every stream.
 */
export const isEncodedEvents = (text: string): boolean => {
  if (text.includes("\r")) return false
  let at = 0
  while (at < text.length) {
    if (text.startsWith("event: ", at)) {
      const end = text.indexOf("\n", at)
      // A name, then the data line; an empty name is no name (the event is then written without it).
      if (end === -1 || end === at + 7) return false
      at = end + 1
    }
    if (!text.startsWith("data: ", at)) return false
    const end = text.indexOf("\n", at)
    if (end === -1 || text.charCodeAt(end + 1) !== 10) return false
    at = end + 2
  }
  return true
}

/** Decodes an untrusted stream's events (see boundedSseDecoder). */
export interface BoundedSseDecoder {
  /** The events completed by these bytes; undefined once an event has grown past the bound. */
  readonly feed: (bytes: Uint8Array) => ReadonlyArray<SseEvent> | undefined
  /**
   * The text of the last feed when it was exactly the events it completed, as encodeSseEvent writes them (nothing
   * carried in from before it, nothing left over): relayed unchanged, those events are that text.
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
  const text = new TextDecoder()
  let pending: Array<SseEvent> = []
  let sinceBoundary = 0
  let boundary = false
  // Whether the text fed so far ends between events (nothing of an event pending in the parser).
  let between = true
  let asEncoded: string | undefined
  const parser = createParser({
    onEvent: (message) => {
      boundary = true
      pending.push(message.event === undefined ? { data: message.data } : { event: message.event, data: message.data })
    }
  })
  return {
    feed: (bytes) => {
      sinceBoundary += bytes.length
      boundary = false
      const fed = text.decode(bytes, { stream: true })
      parser.feed(fed)
      asEncoded = between && fed !== "" && isEncodedEvents(fed) ? fed : undefined
      // A text that ends with a blank line leaves the parser between events, whatever came before it.
      if (fed !== "") between = fed.endsWith("\n\n")
      if (boundary) sinceBoundary = 0
      else if (sinceBoundary > maxEventBytes) return undefined
      const events = pending
      pending = []
      return events
    },
    fedAsEncoded: () => asEncoded
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
