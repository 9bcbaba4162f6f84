// `npm run bench:stream-relay`: what a relayed stream's chunks cost in the service's own code, per chunk: the kind's
// decoder (src/domain/sse.ts), the protocol's observe and the relayed text (as Forwarder's chunkRelay makes it), over
// two streams recorded from the simulator (chat.sse: 20 chunks, the usage chunk, [DONE]; messages.sse: 20 deltas and
// the framing events), read as one piece (a zero-delay stream, as bench:allocations sends) and one event a read (a
// paced stream). Against `before`, the decoder as it was (every text through eventsource-parser, then
// isEncodedEvents), in the same run. Bytes as in bench:schema-decode: a young generation larger than a batch, the
// heap's growth over a batch, the median of several batches.
import * as fs from "node:fs"
import * as path from "node:path"
import { createParser } from "eventsource-parser"
import { boundedSseDecoder, type BoundedSseDecoder, encodedEvents, encodeSseEvent, isEncodedEvents, type SseEvent } from "../../src/domain/sse"
import { chatCompletionsProtocol } from "../../src/providers/providerA/protocol"
import { messagesProtocol } from "../../src/providers/providerB/protocol"
import { emptyTally, type Protocol } from "../../src/providers/protocol"
import { withoutUsage, withoutUsageText } from "../../src/services/endpoints/ChatCompletions"

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc (npm run bench:stream-relay does)")

/** The decoder before this change: the parser for every text, then the scan for fedAsEncoded. */
const before = (maxEventBytes: number): BoundedSseDecoder => {
  const text = new TextDecoder()
  let pending: Array<SseEvent> = []
  let sinceBoundary = 0
  let boundary = false
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

interface Recorded {
  readonly name: string
  readonly protocol: Protocol
  readonly relayEvent: ((event: SseEvent) => SseEvent | undefined) | undefined
  readonly relayText: ((text: string, events: ReadonlyArray<SseEvent>) => string) | undefined
  readonly bytes: Buffer
}

const read = (file: string) => fs.readFileSync(path.join(import.meta.dirname, file))
const streams: ReadonlyArray<Recorded> = [
  // The client did not ask for usage: the relay cuts it (as the gateway benchmark's chat stream).
  { name: "chat", protocol: chatCompletionsProtocol, relayEvent: withoutUsage, relayText: withoutUsageText, bytes: read("chat.sse") },
  { name: "messages", protocol: messagesProtocol, relayEvent: undefined, relayText: undefined, bytes: read("messages.sse") }
]

/** The upstream's reads: the whole stream at once, or each event alone. */
const readsOf = (bytes: Buffer, paced: boolean): ReadonlyArray<Buffer> => {
  if (!paced) return [bytes]
  const reads: Array<Buffer> = []
  let from = 0
  for (let at = bytes.indexOf("\n\n"); at !== -1; at = bytes.indexOf("\n\n", from)) {
    reads.push(bytes.subarray(from, at + 2))
    from = at + 2
  }
  return reads
}

/** One stream relayed as Forwarder's data handler does (chunkRelay, the native kind): the texts' total length. */
const relayOnce = (stream: Recorded, reads: ReadonlyArray<Buffer>, decoderOf: (max: number) => BoundedSseDecoder): number => {
  const decoder = decoderOf(1 << 20)
  const tally = emptyTally(26)
  let sent = 0
  for (const chunk of reads) {
    const events = decoder.feed(chunk)!
    for (let index = 0; index < events.length; index++) {
      if (!stream.protocol.observe(events[index]!, tally)) throw new Error(`${stream.name}: event not valid`)
    }
    const fed = decoder.fedAsEncoded?.()
    let text: string
    if (fed !== undefined && stream.relayText !== undefined) text = stream.relayText(fed, events)
    else if (stream.relayEvent === undefined) text = fed ?? encodedEvents(events, events.length)
    else {
      text = ""
      for (const event of events) {
        const relayed = stream.relayEvent(event)
        if (relayed !== undefined) text += encodeSseEvent(relayed)
      }
    }
    sent += text.length
  }
  if (!tally.terminated) throw new Error(`${stream.name}: not terminated`)
  return sent
}

const median = (values: Array<number>) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const measure = (run: () => number, batch: number, batches: number) => {
  for (let i = 0; i < batch * 5; i++) run()
  const micros: Array<number> = []
  const bytes: Array<number> = []
  for (let b = 0; b < batches; b++) {
    gc!()
    const heap = process.memoryUsage().heapUsed
    const start = process.hrtime.bigint()
    for (let i = 0; i < batch; i++) run()
    const end = process.hrtime.bigint()
    bytes.push((process.memoryUsage().heapUsed - heap) / batch)
    micros.push(Number(end - start) / 1000 / batch)
  }
  // µs: the fastest batch (the machine is shared; a slow batch is other load, not the code).
  return { micros: Math.min(...micros), bytes: median(bytes) }
}

const rows: Array<string> = ["| stream | reads | events | before µs | after µs | before bytes | after bytes | µs an event before → after | bytes an event before → after |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
for (const stream of streams) {
  for (const paced of [false, true]) {
    const reads = readsOf(stream.bytes, paced)
    const events = readsOf(stream.bytes, true).length
    if (relayOnce(stream, reads, before) !== relayOnce(stream, reads, boundedSseDecoder)) throw new Error("relayed texts differ")
    // Interleaved, twice each, the second of each kept: both ran warm on the same machine state.
    measure(() => relayOnce(stream, reads, before), 200, 3)
    measure(() => relayOnce(stream, reads, boundedSseDecoder), 200, 3)
    const old = measure(() => relayOnce(stream, reads, before), 300, 9)
    const now = measure(() => relayOnce(stream, reads, boundedSseDecoder), 300, 9)
    rows.push(
      `| ${stream.name} | ${paced ? "one event a read" : "one read"} | ${events} | ${old.micros.toFixed(1)} | ${now.micros.toFixed(1)} | ` +
        `${Math.round(old.bytes)} | ${Math.round(now.bytes)} | ${(old.micros / events).toFixed(2)} → ${(now.micros / events).toFixed(2)} | ` +
        `${Math.round(old.bytes / events)} → ${Math.round(now.bytes / events)} |`
    )
  }
}
console.log(rows.join("\n"))
