// `npm run bench:stream-relay`: what a relayed stream's chunks cost in the service's own code, per chunk: the kind's
// decoder (src/domain/sse.ts), the protocol's observe, what is sent of the chunk (as Forwarder's chunkRelay makes it)
// and the response's write taking it (a text flattened, measured and encoded; bytes taken as they are), over two
// streams recorded from the simulator (chat.sse: 20 chunks, the usage chunk, [DONE]; messages.sse: 20 deltas and the
// framing events), read as one piece (a zero-delay stream, as bench:allocations sends) and one event a read (a paced
// stream). Against `before`, the usage cut as it was: a new text of the chunk's slices (withoutUsageText), in the
// same run. Bytes as in bench:schema-decode: a young generation larger than a batch, the heap's growth over a batch,
// the median of several batches.
import * as fs from "node:fs"
import * as path from "node:path"
import { isAscii } from "node:buffer"
import { boundedSseDecoder, encodedEvents, encodeSseEvent, noDrops, relayedChunk, type SseEvent } from "../../src/domain/sse"
import { chatCompletionsProtocol } from "../../src/providers/providerA/protocol"
import { messagesProtocol } from "../../src/providers/providerB/protocol"
import { emptyTally, type Protocol } from "../../src/providers/protocol"
import { usageDrops, withoutUsage } from "../../src/services/endpoints/ChatCompletions"

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc (npm run bench:stream-relay does)")

/** The usage cut before this change (ChatCompletions.ts at bd01058): a new text of the chunk's slices. */
const withoutUsageText = (text: string, events: ReadonlyArray<SseEvent>): string => {
  let sent = ""
  let from = 0
  let start = 0
  for (const { data, event } of events) {
    const end = start + (event === undefined ? 0 : event.length + 8) + data.length + 8
    const at = nullUsageCut(data)
    if (at !== -1) {
      const cut = at === undefined ? start : end - 2 - data.length + at
      sent += text.slice(from, cut)
      from = at === undefined ? end : cut + 13
    }
    start = end
  }
  return from === 0 ? text : sent + text.slice(from)
}

/** As ChatCompletions' own (not exported): where the null usage member is cut, -1 for none, undefined to drop. */
const nullUsageCut = (data: string): number | undefined => {
  if (data.endsWith(',"usage":null}')) return data.length - 14
  if (data === "[DONE]" || !data.includes('"usage"')) return -1
  if (data.includes('"choices":[]')) return undefined
  const after = data.indexOf(',"usage":null')
  if (after !== -1 && (data[after + 13] === "," || data[after + 13] === "}")) return after
  return data.indexOf('"usage":null,')
}

interface Recorded {
  readonly name: string
  readonly protocol: Protocol
  readonly relayEvent: ((event: SseEvent) => SseEvent | undefined) | undefined
  readonly relayDrops: ((events: ReadonlyArray<SseEvent>) => ReadonlyArray<number>) | undefined
  readonly bytes: Buffer
}

const read = (file: string) => fs.readFileSync(path.join(import.meta.dirname, file))
const streams: ReadonlyArray<Recorded> = [
  // The client did not ask for usage: the relay cuts it (as the gateway benchmark's chat stream).
  { name: "chat", protocol: chatCompletionsProtocol, relayEvent: withoutUsage, relayDrops: usageDrops, bytes: read("chat.sse") },
  { name: "messages", protocol: messagesProtocol, relayEvent: undefined, relayDrops: undefined, bytes: read("messages.sse") }
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

/** Where the socket encodes a text (Node's stream write: into storage of its own, on the stack below 16 KB). */
const storage = Buffer.allocUnsafe(1 << 16)

/**
 * What the response's write does with what is sent: a text measured for its chunk's size line (flattening it) and
 * encoded into the socket's storage; bytes taken as they are.
 */
const written = (sent: string | Buffer): number => {
  if (typeof sent !== "string") return sent.length
  const length = Buffer.byteLength(sent)
  storage.write(sent)
  return length
}

/** One stream relayed as Forwarder's data handler does (chunkRelay, the native kind): the bytes written. */
const relayOnce = (stream: Recorded, reads: ReadonlyArray<Buffer>, asBefore: boolean): number => {
  const decoder = boundedSseDecoder(1 << 20)
  const tally = emptyTally(26)
  let sent = 0
  for (const chunk of reads) {
    const events = decoder.feed(chunk)!
    for (let index = 0; index < events.length; index++) {
      if (!stream.protocol.observe(events[index]!, tally)) throw new Error(`${stream.name}: event not valid`)
    }
    const fed = decoder.fedAsEncoded?.()
    let out: string | Buffer
    if (fed !== undefined && stream.relayDrops !== undefined) {
      if (asBefore) {
        const text = withoutUsageText(fed, events)
        out = text === fed && text.length === chunk.length && isAscii(chunk) ? chunk : text
      } else out = relayedChunk(fed, chunk, stream.relayDrops(events))
    } else if (stream.relayEvent === undefined) out = fed === undefined ? encodedEvents(events, events.length) : relayedChunk(fed, chunk, noDrops)
    else {
      out = ""
      for (const event of events) {
        const relayed = stream.relayEvent(event)
        if (relayed !== undefined) out += encodeSseEvent(relayed)
      }
    }
    sent += written(out)
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
    if (relayOnce(stream, reads, true) !== relayOnce(stream, reads, false)) throw new Error("relayed lengths differ")
    // Interleaved, twice each, the second of each kept: both ran warm on the same machine state.
    measure(() => relayOnce(stream, reads, true), 200, 3)
    measure(() => relayOnce(stream, reads, false), 200, 3)
    const old = measure(() => relayOnce(stream, reads, true), 300, 9)
    const now = measure(() => relayOnce(stream, reads, false), 300, 9)
    rows.push(
      `| ${stream.name} | ${paced ? "one event a read" : "one read"} | ${events} | ${old.micros.toFixed(1)} | ${now.micros.toFixed(1)} | ` +
        `${Math.round(old.bytes)} | ${Math.round(now.bytes)} | ${(old.micros / events).toFixed(2)} → ${(now.micros / events).toFixed(2)} | ` +
        `${Math.round(old.bytes / events)} → ${Math.round(now.bytes / events)} |`
    )
  }
}
console.log(rows.join("\n"))
