// Deterministic hashing and pseudo-random numbers, so that the same request always gets the same answer.
import { createHash } from "node:crypto"

/** A 32-bit hash of a string (cyrb53 folded to 32 bits); the seed separates independent streams. */
export const hashString = (text: string, seed = 0): number => {
  let h1 = 0xdeadbeef ^ seed
  let h2 = 0x41c6ce57 ^ seed
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (h1 ^ h2) >>> 0
}

export interface Random {
  /** Uniform in [0, 1). */
  readonly next: () => number
  /** Uniform integer in [min, max], both included. */
  readonly int: (min: number, max: number) => number
  readonly pick: <A>(items: readonly [A, ...Array<A>]) => A
  readonly chance: (probability: number) => boolean
}

/** mulberry32: small, fast and good enough for simulated text. */
export const makeRandom = (seed: number): Random => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  return {
    next,
    int,
    pick: (items) => items[int(0, items.length - 1)] ?? items[0],
    chance: (probability) => next() < probability
  }
}

/** A random stream derived from a text (usually the canonical request) and a purpose. */
export const randomFor = (text: string, purpose: string): Random => makeRandom(hashString(text, hashString(purpose)))

const base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** A stable digest of the given parts, as hexadecimal of the given length (at most 64). */
export const hexDigest = (parts: ReadonlyArray<string | number>, length: number): string =>
  createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, length)

/** A stable digest of the given parts in base 62, as the providers' ids look. */
export const base62Digest = (parts: ReadonlyArray<string | number>, length: number): string => {
  const bytes = createHash("sha512").update(parts.join("\u0000")).digest()
  let out = ""
  for (let i = 0; i < length; i++) out += base62Alphabet[(bytes[i % bytes.length] ?? 0) % 62]
  return out
}
