// What an upstream says is untrusted input: its words are redacted before a client sees them, and its
// numbers are bounded before the service acts on them.
import type { Problem } from "../domain/problem"

/** Longest upstream message relayed; the rest is cut (an error message is a sentence, not a payload). */
const maxMessageChars = 1_000

/** A code or param of the upstream's: a short identifier (a field path, an error code), else dropped. */
const identifier = /^[A-Za-z0-9_.\[\]-]{1,64}$/

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * The parts of the base64 of `secret` that are the same wherever the secret sits in a longer encoded
 * text (after "Bearer ", inside "user:key"): base64 encodes three bytes as four characters, so each of
 * the three alignments has its own encoding, and only the characters made of the secret's bytes alone
 * are certain. Both alphabets (standard and URL-safe).
 */
const base64Cores = (secret: string): ReadonlyArray<string> => {
  const bytes = Buffer.from(secret, "utf8")
  const cores: Array<string> = []
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64")
    // Characters from the first group made only of the secret's bytes, to the last whole group of them.
    const start = offset === 0 ? 0 : 4
    const end = 4 * Math.floor((offset + bytes.length) / 3)
    const core = encoded.slice(start, end)
    if (core.length >= 12) cores.push(core, core.replace(/\+/g, "-").replace(/\//g, "_"))
  }
  return cores
}

/** A pattern matching any of the texts, longest first (a key that contains another is replaced whole). */
const anyOf = (texts: ReadonlyArray<string>, flags: string): RegExp | undefined => {
  const unique = [...new Set(texts)].sort((a, b) => b.length - a.length)
  return unique.length === 0 ? undefined : new RegExp(unique.map(escapeRegExp).join("|"), flags)
}

/**
 * Last labels that make a dotted name a host name rather than a field path (`tools[0].function.name`
 * stays): common public suffixes and the suffixes of internal networks. Words that are also field names
 * or English (`name`, `app`, `id`, `to`, `in`) are left out on purpose.
 */
const hostSuffixes = [
  "com", "net", "org", "edu", "gov", "mil", "int", "io", "ai", "co", "dev", "cloud", "tech", "xyz", "biz", "info",
  "eu", "de", "uk", "fr", "nl", "se", "ch", "jp", "cn", "ca", "au", "br", "ru", "es", "pl",
  "internal", "local", "localdomain", "localhost", "lan", "intranet", "intra", "corp", "home", "private", "svc",
  "cluster", "consul", "arpa", "example"
]

// Every pattern below starts only where a run of its characters starts (a lookbehind, not \b): an
// upstream's message is up to 64 KiB, and a pattern tried at every position inside a long run
// (`a-a-a-…`, `a.a.a.…`) would take time quadratic in its length.
/** host:port with a dotted host name. */
const hostWithPort = /(?<![a-z0-9.-])(?:[a-z0-9-]+\.)+[a-z0-9-]+:\d{1,5}\b/gi
/** A dotted name ending in a host suffix. */
const hostName = new RegExp(`(?<![a-z0-9.-])(?:[a-z0-9-]+\\.)+(?:${hostSuffixes.join("|")})(?![a-z0-9_-])`, "gi")
const ipv4 = /(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g
/** IPv6: eight groups, or groups on both sides of a `::`, or `::1` (with optional [brackets]:port). */
const ipv6 =
  /(?<![0-9a-f:])\[?(?:(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}|(?:[0-9a-f]{1,4}:){1,6}:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,5}|::1)\]?(?::\d{1,5})?(?![0-9a-f:])/gi
const localhost = /\blocalhost(?::\d{1,5})?\b/gi
const url = /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi
/** A scheme's credential: `Bearer xyz`, `Basic "xyz"`. */
const schemeCredential = /\b(bearer|basic)\s+["']?[^\s"',;]+["']?/gi
/** `api_key=xyz`, `"x-api-key": "xyz"`, `password: xyz`. */
const namedCredential =
  /\b((?:x-)?api[-_]?key|apikey|access[-_]?token|refresh[-_]?token|client[-_]?secret|secret|password|authorization)(["']?\s*[:=]\s*)["']?[^\s"',;]+["']?/gi
/** A key prefix, then a long run of key characters with a digit in it (error codes such as sk_… words stay). */
const prefixedKey = /(?<![A-Za-z0-9_-])(?:sk|pk|rk|wsk|key)[-_](?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{16,}/g
/** AWS access key ids. */
const awsKeyId = /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g
/** A long run of key or base64 characters mixing upper case, lower case and digits: a credential or an encoded one. */
const opaqueToken = /[A-Za-z0-9_\-+/]{32,}={0,2}/g
const looksOpaque = (token: string): boolean => /[a-z]/.test(token) && /[A-Z]/.test(token) && /\d/.test(token)

export type Redact = (text: string) => string

/**
 * Replaces what must never reach a client in an upstream's words: the given secrets (the service's
 * upstream keys, a workspace's own key) as they are and base64-encoded, the configured upstream host
 * names, any URL, credentials after `Bearer`/`Basic` or a credential's name, key-like and opaque
 * tokens, and host names (with or without a port) and IP addresses. Nothing is cut here: a cut before
 * redaction could leave half a secret that no longer matches.
 */
export const makeRedactor = (secrets: ReadonlyArray<string>, hosts: ReadonlyArray<string> = []): Redact => {
  const usable = secrets.filter((secret) => secret.length >= 4)
  const known = anyOf([...usable, ...hosts.filter((host) => host.length > 0)], "gi")
  // Base64 is case-sensitive: matched as it is.
  const encoded = anyOf(usable.flatMap(base64Cores), "g")
  return (text) => {
    let redacted = text
    if (known !== undefined) redacted = redacted.replace(known, "[redacted]")
    if (encoded !== undefined) redacted = redacted.replace(encoded, "[redacted]")
    return redacted
      .replace(url, "[url]")
      .replace(schemeCredential, "$1 [redacted]")
      .replace(namedCredential, "$1$2[redacted]")
      .replace(prefixedKey, "[redacted]")
      .replace(awsKeyId, "[redacted]")
      .replace(opaqueToken, (token) => (looksOpaque(token) ? "[redacted]" : token))
      .replace(hostWithPort, "[host]")
      .replace(ipv4, "[host]")
      .replace(ipv6, "[host]")
      .replace(localhost, "[host]")
      .replace(hostName, "[host]")
  }
}

/** Both redactors in turn (the service's secrets, then a workspace's own key). */
export const redactBoth = (first: Redact, second: Redact): Redact => (text) => second(first(text))

/** At most maxMessageChars characters, never half of a surrogate pair. */
const cut = (text: string): string => {
  if (text.length <= maxMessageChars) return text
  const end = /[\uD800-\uDBFF]/.test(text.charAt(maxMessageChars - 1)) ? maxMessageChars - 1 : maxMessageChars
  return `${text.slice(0, end)}…`
}

/** A code or param as relayed: a short identifier that redaction leaves as it is, else nothing. */
const safeIdentifier = (value: string | undefined, redact: Redact): string | undefined =>
  value !== undefined && identifier.test(value) && redact(value) === value ? value : undefined

/**
 * The upstream's problem as a client may see it: its message redacted, then cut to 1,000 characters;
 * its code and param only when they are short identifiers that hold nothing redaction would replace
 * (else the code is the neutral `upstream_error` and the param is left out).
 */
export const relayedProblem = (problem: Problem, redact: Redact): Problem => ({
  status: problem.status,
  code: safeIdentifier(problem.code, redact) ?? "upstream_error",
  message: cut(redact(problem.message)),
  param: safeIdentifier(problem.param, redact)
})

/** Longest wait the service passes on to clients: an upstream's hint beyond it is cut to it. */
export const maxRetryAfterMs = 600_000

const clamp = (ms: number): number => Math.min(maxRetryAfterMs, Math.max(0, ms))

/**
 * The upstream's retry hints, bounded to 0–600 s: `retry-after` as whole seconds (from seconds or
 * an HTTP date), `retry-after-ms` as milliseconds (and as `retry-after` when that is missing). A hint that cannot
 * be read is dropped.
 */
export const boundedRetryHints = (
  retryAfter: string | undefined,
  retryAfterMs: string | undefined,
  now: number
): Record<string, string> => {
  const hints: Record<string, string> = {}
  if (retryAfter !== undefined) {
    const trimmed = retryAfter.trim()
    const seconds = /^-?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : (Date.parse(trimmed) - now) / 1_000
    if (Number.isFinite(seconds)) hints["retry-after"] = String(Math.ceil(clamp(seconds * 1_000) / 1_000))
  }
  if (retryAfterMs !== undefined) {
    const trimmed = retryAfterMs.trim()
    const ms = /^-?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : Number.NaN
    if (Number.isFinite(ms)) {
      hints["retry-after-ms"] = String(Math.ceil(clamp(ms)))
      // An upstream that gives only milliseconds (Azure): clients, and the deployment's cooldown, read retry-after.
      hints["retry-after"] ??= String(Math.ceil(clamp(ms) / 1_000))
    }
  }
  return hints
}
