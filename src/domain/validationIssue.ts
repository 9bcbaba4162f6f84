/**
 * Turns a failed decode of a request body into the `{ param, message }` pair that the providers put
 * in their error bodies: `param` in the providers' wire notation (`messages[0].role`, `input[2]`),
 * `message` a sentence naming the field.
 *
 * Works on the flat issue list of `ParseResult.ArrayFormatter` (the same list HttpApiDecodeError
 * carries), so it can be fed either a ParseError or an HttpApiDecodeError's `issues`.
 */
import { ParseResult } from "effect"

export interface ValidationIssue {
  /** Wire path of the offending field; null when the body as a whole is at fault. */
  readonly param: string | null
  readonly message: string
}

export const malformedJsonIssue: ValidationIssue = {
  param: null,
  message: "We could not parse the JSON body of your request."
}

/** `["messages", 0, "role"]` → `messages[0].role`; the empty path → null. */
export const wirePath = (path: ReadonlyArray<PropertyKey>): string | null => {
  if (path.length === 0) return null
  return path.reduce<string>((text, key, position) => {
    if (typeof key === "number") return `${text}[${key}]`
    const name = typeof key === "symbol" ? String(key) : key
    return position === 0 ? name : `${text}.${name}`
  }, "")
}

export const fromParseError = (error: ParseResult.ParseError): ValidationIssue =>
  fromFormatterIssues(ParseResult.ArrayFormatter.formatErrorSync(error))

/**
 * Picks the issue to report. Decoding stops at the first failing field, so the list only holds
 * that field's issues, several when it failed every member of a union. Among them the deepest
 * one wins (the union member that matched furthest: `content[0].image_url.url` rather than
 * "content is not a string"), then a custom message over Effect's default wording.
 */
export const fromFormatterIssues = (
  issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>
): ValidationIssue => {
  const depth = issues.reduce((deepest, issue) => Math.max(deepest, issue.path.length), 0)
  const deepest = issues.filter((issue) => issue.path.length === depth)
  const first = deepest[0]
  if (first === undefined) return { param: null, message: "The request body is invalid." }
  const param = wirePath(first.path)
  const sameField = deepest.filter((issue) => samePath(issue.path, first.path))

  const custom = sameField.find((issue) => !isDefaultMessage(issue))
  if (custom !== undefined) return { param, message: custom.message }
  if (sameField.some((issue) => issue._tag === "Missing")) {
    return { param, message: `Missing required parameter: '${param ?? "body"}'.` }
  }
  if (sameField.some((issue) => issue._tag === "Unexpected")) return unknownParameters(deepest)
  if (param === null) return { param, message: "The request body must be a JSON object." }

  const parsed = sameField.flatMap((issue) => {
    const expectation = parseDefaultMessage(issue.message)
    return expectation === undefined ? [] : [expectation]
  })
  const actual = parsed[0]?.actual
  if (actual === undefined) return { param, message: `${param}: ${first.message}` }
  return { param, message: `${param}: expected ${describeExpectations(parsed.map((p) => p.expected))}, got ${actual}` }
}

/**
 * Every unknown key one object refused (decoded with `errors: "all"` there are several), named together.
 * Issues of one object share its message (`is unexpected, expected: "name" | "scopes"`); when the members
 * of a union each refused keys, the member that refused the fewest is the one the caller meant.
 */
const unknownParameters = (issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>): ValidationIssue => {
  const byObject = new Map<string, Array<string>>()
  for (const issue of issues) {
    if (issue._tag !== "Unexpected") continue
    const names = byObject.get(issue.message) ?? []
    names.push(wirePath(issue.path) ?? "body")
    byObject.set(issue.message, names)
  }
  const [message, names] = [...byObject].reduce((fewest, entry) => (entry[1].length < fewest[1].length ? entry : fewest))
  // Effect's wording: `is unexpected, expected: "families" | "models"`.
  const known = /expected: (.+)$/.exec(message)?.[1]?.replaceAll("\"", "").split(" | ").join(", ")
  const listed = names.map((name) => `'${name}'`).join(", ")
  return {
    param: names[0] ?? null,
    message: `Unknown parameter${names.length > 1 ? "s" : ""}: ${listed}${known ? ` (expected one of ${known})` : ""}.`
  }
}

const samePath = (a: ReadonlyArray<PropertyKey>, b: ReadonlyArray<PropertyKey>): boolean =>
  a.length === b.length && a.every((key, index) => key === b[index])

// Effect's default wording, used when no schema message applies.
const DEFAULT_TYPE_MESSAGE = /^Expected ([\s\S]+?), actual ([\s\S]*)$/
const DEFAULT_TAG_MESSAGES = new Set(["is missing", "is unexpected", "is forbidden"])

const isDefaultMessage = (issue: ParseResult.ArrayFormatterIssue): boolean =>
  issue._tag === "Missing" || issue._tag === "Unexpected" || DEFAULT_TAG_MESSAGES.has(issue.message) ||
  DEFAULT_TYPE_MESSAGE.test(issue.message)

interface Expectation {
  readonly expected: string
  readonly actual: string
}

const parseDefaultMessage = (message: string): Expectation | undefined => {
  const match = DEFAULT_TYPE_MESSAGE.exec(message)
  if (match === null || match[1] === undefined || match[2] === undefined) return undefined
  const actual = match[2].length > 80 ? `${match[2].slice(0, 77)}...` : match[2]
  return { expected: match[1], actual }
}

const LITERAL = /^("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false)$/

const KEYWORDS: Record<string, string> = {
  string: "a string",
  number: "a number",
  boolean: "a boolean",
  object: "an object",
  Int: "an integer",
  int: "an integer",
  unknown: "any value"
}

/** `"a" | "b"`, `string`, `ReadonlyArray<…>` … → "one of a, b or a string". */
const describeExpectations = (expectedList: ReadonlyArray<string>): string => {
  const literals: Array<string> = []
  const kinds: Array<string> = []
  for (const expected of expectedList) {
    const members = expected.split(" | ")
    if (members.every((member) => LITERAL.test(member))) {
      literals.push(...members.map((member) => member.startsWith("\"") ? member.slice(1, -1) : member))
    } else {
      kinds.push(describeKind(expected))
    }
  }
  const parts = unique([
    ...(literals.length === 0
      ? []
      : literals.length === 1
      ? [JSON.stringify(literals[0])]
      : [`one of ${unique(literals).join(", ")}`]),
    ...kinds
  ])
  // null is only ever the "leave it out" alternative of an optional parameter: not worth naming.
  const named = parts.length > 1 ? parts.filter((part) => part !== "null" && part !== "undefined") : parts
  return joinAlternatives(named)
}

const describeKind = (expected: string): string => {
  const keyword = KEYWORDS[expected]
  if (keyword !== undefined) return keyword
  if (expected.startsWith("{")) return "an object"
  if (/^(ReadonlyArray<|Array<|readonly \[|\[)/.test(expected)) return "an array"
  return expected
}

const unique = (values: ReadonlyArray<string>): Array<string> => [...new Set(values)]

const joinAlternatives = (parts: ReadonlyArray<string>): string =>
  parts.length <= 1 ? (parts[0] ?? "a valid value") : `${parts.slice(0, -1).join(", ")} or ${parts[parts.length - 1]}`
