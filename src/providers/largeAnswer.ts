import { isRecord, parseJson } from "./protocol"

// A large JSON answer's framing read from its bytes, as they came: decoding tens of kilobytes of vectors to a
// string only to look at its first and last members cost more than the rest of the request. The keys looked for
// are ASCII, and an ASCII byte never occurs inside a multi-byte UTF-8 character: a byte found is a character found.

const openBrace = 0x7b
const closeBrace = 0x7d
const openBracket = 0x5b
const colon = 0x3a
const usageKey = Buffer.from('"usage"', "latin1")

/** JSON's whitespace, and \v and \f, which String.prototype.trim also removes. */
const isSpace = (byte: number | undefined): boolean => byte === 0x20 || (byte !== undefined && byte >= 0x09 && byte <= 0x0d)

/** The first byte at or after `from` that is not whitespace (the length when none is). */
const skipSpaces = (bytes: Uint8Array, from: number): number => {
  let at = from
  while (at < bytes.length && isSpace(bytes[at])) at++
  return at
}

/** Whether `key`'s bytes are at `at`. */
const isAt = (bytes: Uint8Array, key: Uint8Array, at: number): boolean => {
  if (at + key.length > bytes.length) return false
  for (let index = 0; index < key.length; index++) if (bytes[at + index] !== key[index]) return false
  return true
}

/** A member's key as its bytes in the answer (`"data"`), made once. */
export const memberKey = (name: string): Buffer => Buffer.from(JSON.stringify(name), "utf8")

/**
 * The `"usage": {…}` member that ends a JSON answer (`…, "usage": { "prompt_tokens": 8 } }`), read
 * from the bytes' tail: undefined unless the answer is an object whose last member is a flat usage
 * object.
 */
export const trailingUsage = (bytes: Buffer): Record<string, unknown> | undefined => {
  if (bytes[0] !== openBrace) return undefined
  const key = bytes.lastIndexOf(usageKey)
  const open = key === -1 ? -1 : bytes.indexOf(openBrace, key)
  const close = open === -1 ? -1 : bytes.indexOf(closeBrace, open)
  if (close === -1) return undefined
  // Between the key and its object only the colon; after the object only the answer's own closing brace.
  const separator = skipSpaces(bytes, key + usageKey.length)
  if (bytes[separator] !== colon || skipSpaces(bytes, separator + 1) !== open) return undefined
  const end = skipSpaces(bytes, close + 1)
  if (bytes[end] !== closeBrace || skipSpaces(bytes, end + 1) !== bytes.length) return undefined
  const usage = parseJson(bytes.toString("utf8", open, close + 1))
  return isRecord(usage) ? usage : undefined
}

/** Whether the answer is an object whose first member is one of `keys` (made by memberKey). */
export const firstMemberIn = (bytes: Buffer, keys: ReadonlyArray<Buffer>): boolean => {
  if (bytes[0] !== openBrace) return false
  const at = skipSpaces(bytes, 1)
  return keys.some((key) => isAt(bytes, key, at))
}

/** Whether `key` (made by memberKey) is followed somewhere in the answer by a colon and a list (`"data": [`). */
export const hasListAt = (bytes: Buffer, key: Buffer): boolean => {
  for (let at = bytes.indexOf(key); at !== -1; at = bytes.indexOf(key, at + 1)) {
    const separator = skipSpaces(bytes, at + key.length)
    if (bytes[separator] === colon && bytes[skipSpaces(bytes, separator + 1)] === openBracket) return true
  }
  return false
}
