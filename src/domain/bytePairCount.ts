// Counting the tokens of a text with a byte-pair encoding: the text is cut into pieces by the encoding's
// pattern, each piece is one token when the table has it whole, else its bytes are merged pair by pair,
// lowest rank first (leftmost on a tie), as the reference implementation does; the count is what is left.
// Same counts as gpt-tokenizer and tiktoken (test/domain/bytePairCount.test.ts compares them), without
// their tables' memory, and without their cost on long pieces: their merge rescans the whole piece after
// every merge (a run of 32,000 letters took 0.4 s); here pieces over `linearMergeBytes` keep their pairs
// in a heap (a fraction of a millisecond).
import type { RankTable } from "./rankTable"

/** Pieces up to this many bytes are merged by rescanning (fastest when short); longer ones through a heap. */
const linearMergeBytes = 64

/**
 * Short pieces (words, punctuation) recur: their counts are remembered, up to this many (then forgotten all at
 * once), so that a prompt's common words cost one lookup, as in a table of strings.
 */
const rememberedPieces = 4096
const rememberedChars = 16

/** Counts the tokens of texts with one encoding; holds scratch arrays that it reuses (one counter per encoding). */
export interface BytePairCounter {
  readonly count: (text: string) => number
}

export const makeBytePairCounter = (table: RankTable, pattern: RegExp): BytePairCounter => {
  const split = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`)
  const encoder = new TextEncoder()
  let bytes = new Uint8Array(1024)
  // Linear merge: part starts and the rank of each part with its right neighbour.
  const starts = new Int32Array(linearMergeBytes + 1)
  const ranks = new Float64Array(linearMergeBytes + 1)
  // Heap merge: linked parts, each part's current pair rank, and a heap of (rank, start) keys.
  let next = new Int32Array(0)
  let previous = new Int32Array(0)
  let pairRank = new Float64Array(0)
  let heap = new Float64Array(0)

  /** The rank of bytes[from, to) (a pair of parts), or Infinity when it is no token. */
  const rank = (from: number, to: number): number => {
    const found = table.rankOf(bytes, from, to)
    return found === -1 ? Number.POSITIVE_INFINITY : found
  }

  const linearMerge = (length: number): number => {
    let parts = length + 1
    for (let at = 0; at < parts; at++) {
      starts[at] = at
      ranks[at] = at + 2 <= length ? rank(at, at + 2) : Number.POSITIVE_INFINITY
    }
    while (parts > 2) {
      let lowest = Number.POSITIVE_INFINITY
      let at = -1
      for (let i = 0; i < parts - 2; i++) {
        if (ranks[i]! < lowest) {
          lowest = ranks[i]!
          at = i
        }
      }
      if (at === -1) break
      // Part `at` absorbs part `at + 1`.
      starts.copyWithin(at + 1, at + 2, parts)
      ranks.copyWithin(at + 1, at + 2, parts)
      parts -= 1
      ranks[at] = at + 2 < parts ? rank(starts[at]!, starts[at + 2]!) : Number.POSITIVE_INFINITY
      if (at > 0) ranks[at - 1] = rank(starts[at - 1]!, starts[at + 1]!)
    }
    return parts - 1
  }

  // Heap keys: rank * 2^24 + start, so the lowest rank comes first and the leftmost pair among equal ranks.
  const keyShift = 2 ** 24
  let heapSize = 0
  const push = (key: number) => {
    let at = heapSize++
    while (at > 0) {
      const parent = (at - 1) >> 1
      if (heap[parent]! <= key) break
      heap[at] = heap[parent]!
      at = parent
    }
    heap[at] = key
  }
  const pop = (): number => {
    const top = heap[0]!
    const last = heap[--heapSize]!
    let at = 0
    for (;;) {
      let child = 2 * at + 1
      if (child >= heapSize) break
      if (child + 1 < heapSize && heap[child + 1]! < heap[child]!) child += 1
      if (heap[child]! >= last) break
      heap[at] = heap[child]!
      at = child
    }
    heap[at] = last
    return top
  }

  /** The pair rank of the part starting at `start` with the part after it, pushed when it is a token. */
  const updatePair = (start: number, length: number) => {
    const right = next[start]!
    const found = right < length ? rank(start, next[right]!) : Number.POSITIVE_INFINITY
    pairRank[start] = found
    if (found !== Number.POSITIVE_INFINITY) push(found * keyShift + start)
  }

  const heapMerge = (length: number): number => {
    if (next.length < length + 1) {
      next = new Int32Array(length + 1)
      previous = new Int32Array(length + 1)
      pairRank = new Float64Array(length + 1)
      heap = new Float64Array(3 * length + 8)
    }
    heapSize = 0
    for (let at = 0; at <= length; at++) {
      next[at] = at + 1
      previous[at] = at - 1
    }
    for (let at = 0; at < length; at++) updatePair(at, length)
    let parts = length
    while (heapSize > 0) {
      const key = pop()
      const start = key % keyShift
      const found = (key - start) / keyShift
      // Stale: the part was absorbed (its rank is reset) or its pair changed since.
      if (pairRank[start] !== found) continue
      const absorbed = next[start]!
      next[start] = next[absorbed]!
      previous[next[absorbed]!] = start
      pairRank[absorbed] = Number.NaN
      parts -= 1
      updatePair(start, length)
      if (start > 0) updatePair(previous[start]!, length)
    }
    return parts
  }

  const remembered = new Map<string, number>()
  const pieceTokens = (piece: string): number => {
    if (piece.length > rememberedChars) return mergedTokens(piece)
    const known = remembered.get(piece)
    if (known !== undefined) return known
    if (remembered.size >= rememberedPieces) remembered.clear()
    const tokens = mergedTokens(piece)
    remembered.set(piece, tokens)
    return tokens
  }

  const mergedTokens = (piece: string): number => {
    if (bytes.length < piece.length * 3) bytes = new Uint8Array(piece.length * 3)
    const length = encoder.encodeInto(piece, bytes).written
    if (length <= 1 || table.rankOf(bytes, 0, length) !== -1) return 1
    return length <= linearMergeBytes ? linearMerge(length) : heapMerge(length)
  }

  return {
    count: (text) => {
      let total = 0
      split.lastIndex = 0
      for (let match = split.exec(text); match !== null; match = split.exec(text)) {
        if (match[0].length > 0) total += pieceTokens(match[0])
        // A pattern that matched nothing would not advance.
        else split.lastIndex += 1
      }
      return total
    }
  }
}
