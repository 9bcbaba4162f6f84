import type { SseEvent } from "../domain/sse"
import type { Problem } from "../domain/problem"

/** What a stream told so far about tokens: exact once the upstream reports usage, estimated until then. */
export interface StreamTally {
  inputTokens: number
  outputTokens: number
  /** Characters of generated text seen, for estimating output tokens of a stream cut short. */
  generatedChars: number
  /** Whether the upstream reported output usage (then outputTokens is exact). */
  reportedOutput: boolean
  /** The upstream's own in-band error, when it sent one: the client gets it rather than a generic one. */
  upstreamError?: Problem | undefined
  /** Whether the protocol's terminal event arrived: a stream that ends without it was cut short. */
  terminated: boolean
}

export const emptyTally = (estimatedInputTokens: number): StreamTally => ({
  inputTokens: estimatedInputTokens,
  outputTokens: 0,
  generatedChars: 0,
  reportedOutput: false,
  terminated: false
})

/** Output tokens to bill: the upstream's count when it gave one, else about four characters a token. */
export const billedOutputTokens = (tally: StreamTally): number =>
  tally.reportedOutput ? tally.outputTokens : Math.ceil(tally.generatedChars / 4)

/**
 * What the forwarding machinery needs to know of one wire protocol: how to read usage from its
 * answers, how its upstream errors look, and how it reports an error inside a stream.
 */
export interface Protocol {
  /** Input and output tokens of a complete JSON answer; None when the body is not a valid answer. */
  readonly usageOfBody: (body: unknown) => { readonly inputTokens: number; readonly outputTokens: number } | undefined
  /**
   * For answers too large to parse whole on every request (the vectors of embeddings): the usage
   * read from the answer's bytes without decoding or parsing the rest, or undefined when it cannot
   * be found that way (then the whole answer is parsed).
   */
  readonly usageOfLargeAnswer?: (bytes: Buffer) => { readonly inputTokens: number; readonly outputTokens: number } | undefined
  /**
   * Reads one stream event into the tally. Returns false when the event is not valid for the
   * protocol (the upstream sent a malformed stream), or when it is the upstream's own in-band
   * error (then recorded in tally.upstreamError). The terminator ([DONE], message_stop) is valid
   * and sets tally.terminated.
   */
  readonly observe: (event: SseEvent, tally: StreamTally) => boolean
  /** The upstream's own error answer as a problem of the same status (for 4xx passed through). */
  readonly upstreamProblem: (status: number, body: string) => Problem
  /**
   * Upstream 5xx statuses that belong to the protocol and that its clients act on (the messages
   * protocol's 529 overloaded): passed through like a 4xx instead of becoming 502.
   */
  readonly passedServerStatuses?: ReadonlyArray<number>
  /** The protocol's in-band error event, for failures after the first byte. */
  readonly streamError: (problem: Problem) => string
}

/** Reads JSON without throwing; undefined when the text is not JSON. */
export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A usage figure as the upstream reported it, negative, fractional or huge as it may be: the Forwarder bounds it
 * (and flags the record) before anything uses it (src/domain/usageBounds.ts). 0 when absent or not a number.
 */
export const numberAt = (record: Record<string, unknown>, key: string): number => {
  const value = record[key]
  return typeof value === "number" ? value : 0
}
