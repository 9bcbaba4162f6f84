// Sends a kind's prepared call as it is (fetch, Node's undici) and reads the whole answer.
import { Effect } from "effect"
import type { SseEvent } from "../../../../src/domain/sse"
import type { PreparedCall, StreamDecoder } from "../../../../src/services/forwarding/kinds/UpstreamKind"

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly bytes: Uint8Array
  readonly text: string
}

export const sendPrepared = (prepared: PreparedCall): Effect.Effect<Answer> =>
  Effect.promise(async () => {
    const response = await fetch(prepared.url, { method: prepared.method, headers: prepared.headers, body: prepared.body })
    const bytes = new Uint8Array(await response.arrayBuffer())
    return { status: response.status, headers: response.headers, bytes, text: new TextDecoder().decode(bytes) }
  })

/** A stream answer's events as a decoder completes them, fed in small pieces as the network may cut them. */
export const decodeAll = (decoder: StreamDecoder, bytes: Uint8Array): ReadonlyArray<SseEvent> | undefined => {
  const events: Array<SseEvent> = []
  for (let at = 0; at < bytes.length; at += 7) {
    const completed = decoder.feed(bytes.subarray(at, at + 7))
    if (completed === undefined) return undefined
    events.push(...completed)
  }
  return events
}
