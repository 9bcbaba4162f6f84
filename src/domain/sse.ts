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
 * As sseDecoder, for an untrusted stream: `feed` answers undefined once an event (or a line that
 * never ends) has grown past maxEventBytes, rather than buffering it without limit. Counted in
 * bytes fed since the last complete event (comments do not count as one: they could be interleaved
 * with the data lines of an event that never ends), so the bound is loose by one chunk.
 */
export const boundedSseDecoder = (maxEventBytes: number): { readonly feed: (bytes: Uint8Array) => ReadonlyArray<SseEvent> | undefined } => {
  const text = new TextDecoder()
  let pending: Array<SseEvent> = []
  let sinceBoundary = 0
  let boundary = false
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
      parser.feed(text.decode(bytes, { stream: true }))
      if (boundary) sinceBoundary = 0
      else if (sinceBoundary > maxEventBytes) return undefined
      const events = pending
      pending = []
      return events
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
