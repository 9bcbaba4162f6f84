// What an upstream says is untrusted input: its words are scrubbed before a client sees them, and its
// numbers are bounded before the service acts on them.
import type { Problem } from "../domain/problem"

/** Longest upstream message relayed; the rest is cut (an error message is a sentence, not a payload). */
const maxMessageChars = 1_000

/** A code or param of the upstream's: a short identifier, else dropped. */
const identifier = /^[A-Za-z0-9_.\[\]-]{1,100}$/

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Replaces what must never reach a client in an upstream's error text: the service's configured
 * upstream keys and host names (an upstream, or a proxy in front of it, may echo a credential or
 * an internal address), any URL, and bearer credentials. The messages themselves are kept: the
 * upstream's validation errors are what the caller needs to fix a request.
 */
export const makeScrubber = (secrets: ReadonlyArray<string>, hosts: ReadonlyArray<string>): (text: string) => string => {
  const known = [...secrets.filter((secret) => secret.length >= 4), ...hosts.filter((host) => host.length > 0)]
    // Longest first, so a key that contains another is replaced whole.
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
  const knownPattern = known.length === 0 ? undefined : new RegExp(known.join("|"), "gi")
  return (text) => {
    let scrubbed = text.length > maxMessageChars ? `${text.slice(0, maxMessageChars)}…` : text
    if (knownPattern !== undefined) scrubbed = scrubbed.replace(knownPattern, "[redacted]")
    return scrubbed
      .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, "[url]")
      .replace(/\b(bearer|basic)\s+[^\s"',]+/gi, "$1 [redacted]")
      // Credential-looking tokens: a key prefix, then a long run of key characters with a digit in it
      // (so that error codes such as sk_… words are left alone).
      .replace(/\b(?:sk|pk|rk|wsk)[-_](?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{16,}/g, "[redacted]")
      // host:port of an address the upstream names (an internal proxy, a load balancer).
      .replace(/\b(?:[a-z0-9-]+\.)+[a-z0-9-]+:\d{2,5}\b/gi, "[host]")
      .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g, "[host]")
  }
}

/** The upstream's problem with its words scrubbed and its code and param kept only when they are plain identifiers. */
export const scrubProblem = (problem: Problem, scrub: (text: string) => string): Problem => ({
  status: problem.status,
  code: identifier.test(problem.code) ? problem.code : "upstream_error",
  message: scrub(problem.message),
  param: problem.param !== undefined && identifier.test(problem.param) ? problem.param : undefined
})

/** Longest wait the service passes on to clients: an upstream's hint beyond it is cut to it. */
export const maxRetryAfterMs = 600_000

const clamp = (ms: number): number => Math.min(maxRetryAfterMs, Math.max(0, ms))

/**
 * The upstream's retry hints, bounded to 0–600 s: `retry-after` as whole seconds (from seconds or
 * an HTTP date), `retry-after-ms` as milliseconds. A hint that cannot be read is dropped.
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
    if (Number.isFinite(ms)) hints["retry-after-ms"] = String(Math.ceil(clamp(ms)))
  }
  return hints
}
