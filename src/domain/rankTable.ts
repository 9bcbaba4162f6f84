// A byte-pair encoding's rank table in one flat byte array: every token's bytes end to end, an offset
// index, and an open-addressing hash index from bytes to rank. About 4 MB for o200k_base where a Map of
// 200,000 strings took ~20 MB of heap (bench/RESULTS.md, "Footprint"); the build writes it as a file
// (scripts/build.mjs), so loading it is reading that file. Pure: this module imports nothing, so the
// build can bundle and run it as is.

/** One token of a published table: its text, or its bytes when they are not valid UTF-8. */
export type RankEntry = string | ReadonlyArray<number>

/** "BPE2", little-endian: the layout's version; a table of another layout is packed again from the source. */
const magic = 0x32455042
const headerWords = 5

/** FNV-1a over bytes[start, end), mixed so that the low bits used as the index vary. */
const hashBytes = (bytes: Uint8Array, start: number, end: number): number => {
  let hash = 0x811c9dc5
  for (let at = start; at < end; at++) hash = Math.imul(hash ^ bytes[at]!, 0x01000193)
  return (hash ^ (hash >>> 15)) >>> 0
}

/**
 * Packs a table (rank = index; holes skipped) into the flat layout:
 * header [magic, count, indexBits, byteCount, maxTokenBytes], offsets (count + 1), index slots (rank + 1,
 * 0 empty), then the bytes.
 */
export const packRanks = (ranks: ReadonlyArray<RankEntry | undefined>): Uint8Array => {
  const encoder = new TextEncoder()
  const tokens = ranks.map((entry) => entry === undefined ? new Uint8Array(0) : typeof entry === "string" ? encoder.encode(entry) : Uint8Array.from(entry))
  const count = tokens.length
  const byteCount = tokens.reduce((sum, token) => sum + token.length, 0)
  // At most half full: probes stay short.
  let indexBits = 1
  while (1 << indexBits < count * 2) indexBits += 1
  const slots = 1 << indexBits
  const words = headerWords + count + 1 + slots
  const packed = new Uint8Array(words * 4 + byteCount)
  const view = new Uint32Array(packed.buffer, 0, words)
  const bytes = packed.subarray(words * 4)
  let maxTokenBytes = 0
  let offset = 0
  tokens.forEach((token, rank) => {
    view[headerWords + rank] = offset
    bytes.set(token, offset)
    offset += token.length
    maxTokenBytes = Math.max(maxTokenBytes, token.length)
  })
  view[headerWords + count] = offset
  view.set([magic, count, indexBits, byteCount, maxTokenBytes], 0)
  const index = view.subarray(headerWords + count + 1)
  tokens.forEach((token, rank) => {
    if (token.length === 0) return
    let slot = hashBytes(token, 0, token.length) & (slots - 1)
    while (index[slot] !== 0) slot = (slot + 1) & (slots - 1)
    index[slot] = rank + 1
  })
  return packed
}

/** A packed table, read in place. */
export interface RankTable {
  /** The most bytes one token holds. */
  readonly maxTokenBytes: number
  /** The rank of bytes[start, end), or -1 when no token is exactly those bytes. */
  readonly rankOf: (bytes: Uint8Array, start: number, end: number) => number
}

/** Reads a packed table; undefined when the bytes are not one (another layout, a truncated file). */
export const openRankTable = (packed: Uint8Array): RankTable | undefined => {
  // Typed views need 4-byte alignment; a pooled Buffer may start anywhere.
  const aligned = packed.byteOffset % 4 === 0 ? packed : packed.slice()
  if (aligned.byteLength < headerWords * 4) return undefined
  const header = new Uint32Array(aligned.buffer, aligned.byteOffset, headerWords)
  const [found, count, indexBits, byteCount, maxTokenBytes] = header as unknown as [number, number, number, number, number]
  const words = headerWords + count + 1 + (1 << indexBits)
  if (found !== magic || indexBits > 30 || aligned.byteLength !== words * 4 + byteCount) return undefined
  const offsets = new Uint32Array(aligned.buffer, aligned.byteOffset + headerWords * 4, count + 1)
  const index = new Uint32Array(aligned.buffer, aligned.byteOffset + (headerWords + count + 1) * 4, 1 << indexBits)
  const tokens = aligned.subarray(words * 4)
  const mask = (1 << indexBits) - 1
  return {
    maxTokenBytes,
    rankOf: (bytes, start, end) => {
      const length = end - start
      if (length > maxTokenBytes || length <= 0) return -1
      for (let slot = hashBytes(bytes, start, end) & mask; ; slot = (slot + 1) & mask) {
        const entry = index[slot]!
        if (entry === 0) return -1
        const rank = entry - 1
        const from = offsets[rank]!
        if (offsets[rank + 1]! - from !== length) continue
        let at = 0
        while (at < length && tokens[from + at] === bytes[start + at]) at += 1
        if (at === length) return rank
      }
    }
  }
}
