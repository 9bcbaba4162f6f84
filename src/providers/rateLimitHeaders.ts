import { resetDuration } from "../domain/rateLimits"
import { maxRetryAfterMs } from "./untrusted"
import type { LimitReading, LimitReadings } from "../domain/refusals"

const remaining = (reading: LimitReading) => String(Math.max(0, Math.floor(reading.remaining)))

/** The chat-completions header set (`x-ratelimit-*`, resets as durations), also the exports'. */
export const xRateLimitHeaders = ({ requests, tokens }: LimitReadings): Record<string, string> => ({
  "x-ratelimit-limit-requests": String(requests.limit),
  "x-ratelimit-remaining-requests": remaining(requests),
  "x-ratelimit-reset-requests": resetDuration(requests.resetMs),
  "x-ratelimit-limit-tokens": String(tokens.limit),
  "x-ratelimit-remaining-tokens": remaining(tokens),
  "x-ratelimit-reset-tokens": resetDuration(tokens.resetMs)
})

// The texts of the instants of the last minute or so, by second: every request of a second shows the same reset
// instants, written once rather than as a Date, its ISO text and a copy without milliseconds each time (~1 KB).
const instantSlots = 64
const instantSeconds = new Array<number>(instantSlots).fill(-1)
const instantTexts = new Array<string>(instantSlots).fill("")

/** An instant to the second, as ISO text without milliseconds (`2026-11-23T10:00:00Z`). */
const instantText = (ms: number): string => {
  const second = Math.floor(ms / 1_000)
  const slot = second & (instantSlots - 1)
  if (instantSeconds[slot] === second) return instantTexts[slot]!
  const text = new Date(second * 1_000).toISOString().replace(/\.\d{3}Z$/, "Z")
  instantSeconds[slot] = second
  instantTexts[slot] = text
  return text
}

/** The messages header set (`anthropic-ratelimit-*`, resets as instants to the second). */
export const messagesRateLimitHeaders = ({ at, requests, tokens }: LimitReadings): Record<string, string> => ({
  "anthropic-ratelimit-requests-limit": String(requests.limit),
  "anthropic-ratelimit-requests-remaining": remaining(requests),
  "anthropic-ratelimit-requests-reset": instantText(at + requests.resetMs),
  "anthropic-ratelimit-tokens-limit": String(tokens.limit),
  "anthropic-ratelimit-tokens-remaining": remaining(tokens),
  "anthropic-ratelimit-tokens-reset": instantText(at + tokens.resetMs)
})

/**
 * Both retry hints the client libraries read: whole seconds (at least 1) and exact milliseconds,
 * never more than 600 s (a client told to wait longer asks again then, and is told anew).
 */
export const retryHeaders = (retryAfterMs: number): Record<string, string> => {
  const ms = Math.min(maxRetryAfterMs, retryAfterMs)
  return {
    "retry-after": String(Math.max(1, Math.ceil(ms / 1_000))),
    "retry-after-ms": String(Math.max(1, Math.ceil(ms)))
  }
}
