// JSON nested deeper than any request of this API needs ([[[[…]]]] 5,000 deep in `metadata` or a tool's schema)
// is refused with the field named, before anything walks it recursively: schema decoding, JSON.stringify and
// the token estimates recurse, and such a body overflowed the stack (a 500). Both checks here are loops, never
// recursive themselves: one over parsed values (forwarded bodies, parsed once anyway), one over the text
// (the HttpApi app's bodies, which the framework parses after it).
import { wirePath } from "./validationIssue"

/**
 * Levels of nesting a request body may have, the body itself the first: a tool's JSON schema nested ten
 * objects deep (the providers' own limit for structured outputs) uses about twenty.
 */
export const maxJsonDepth = 64

/** Segments kept in a reported path: enough to say which field, not the whole chain down. */
const reportedSegments = 6

interface Frame {
  readonly value: object
  /** The object's keys; undefined for an array. */
  readonly keys: ReadonlyArray<string> | undefined
  next: number
}

/**
 * The wire path (`tools[0].input_schema.properties.a`, its first few segments) of the first value nested deeper
 * than `maxDepth` levels, or undefined when the value is within the bound. An empty path (the body itself too
 * deep, which only a maxDepth of 0 allows) is `body`.
 */
export const tooDeepPath = (value: unknown, maxDepth: number): string | undefined => {
  const stack: Array<Frame> = []
  const enter = (child: unknown): boolean => {
    if (typeof child !== "object" || child === null) return true
    if (stack.length >= maxDepth) return false
    stack.push({ value: child, keys: Array.isArray(child) ? undefined : Object.keys(child), next: 0 })
    return true
  }
  if (!enter(value)) return "body"
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    const size = frame.keys === undefined ? (frame.value as ReadonlyArray<unknown>).length : frame.keys.length
    if (frame.next >= size) {
      stack.pop()
      continue
    }
    const key = frame.keys === undefined ? frame.next : frame.keys[frame.next]!
    frame.next += 1
    if (!enter((frame.value as Record<string | number, unknown>)[key])) return reportedPath(stack)
  }
  return undefined
}

/** The path of the values on the stack, down to its first few field names. */
const reportedPath = (stack: ReadonlyArray<Frame>): string => {
  const path = stack.slice(0, reportedSegments).map((frame) => frame.keys === undefined ? frame.next - 1 : frame.keys[frame.next - 1]!)
  return wirePath(path) ?? "body"
}

/**
 * Whether JSON text nests deeper than `maxDepth` (brackets outside strings), read in one pass without parsing:
 * malformed text is left to the parser.
 */
export const textNestsDeeper = (text: string, maxDepth: number): boolean => {
  let depth = 0
  let inString = false
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at)
    if (inString) {
      if (code === 0x5c) at += 1 // a backslash: the next character is escaped
      else if (code === 0x22) inString = false
    } else if (code === 0x22) inString = true
    else if (code === 0x5b || code === 0x7b) {
      depth += 1
      if (depth > maxDepth) return true
    } else if (code === 0x5d || code === 0x7d) depth -= 1
  }
  return false
}
