import type { Problem } from "../../domain/problem"
import type { SseEvent } from "../../domain/sse"
import { isRecord, numberAt, parseJson, type Protocol, type StreamTally } from "../protocol"

/** The messages protocol's error type of each status, as its client library expects (`err.type`). */
export const providerBErrorType = (status: number): string => {
  switch (status) {
    case 413:
      return "request_too_large"
    case 400:
    case 415:
    case 422:
      return "invalid_request_error"
    case 401:
      return "authentication_error"
    case 402:
      return "billing_error"
    case 403:
      return "permission_error"
    case 404:
      return "not_found_error"
    case 429:
      return "rate_limit_error"
    case 408:
    case 504:
      return "timeout_error"
    case 503:
    case 529:
      return "overloaded_error"
    default:
      return status >= 400 && status < 500 ? "invalid_request_error" : "api_error"
  }
}

/** The status of each error type, for an error the upstream reported inside a stream. */
const statusOfType: ReadonlyMap<string, number> = new Map([
  ["invalid_request_error", 400],
  ["authentication_error", 401],
  ["billing_error", 402],
  ["permission_error", 403],
  ["not_found_error", 404],
  ["request_too_large", 413],
  ["rate_limit_error", 429],
  ["timeout_error", 504],
  ["api_error", 500],
  ["overloaded_error", 529]
])

/** `{ type: "error", error: { type, message } }`, the error body and the data of `event: error`. */
export const providerBErrorBody = (problem: Problem) => ({
  type: "error" as const,
  error: {
    // The upstream's own type when the problem is its in-band error; else the type of the status.
    type: statusOfType.has(problem.code) ? problem.code : providerBErrorType(problem.status),
    message: problem.message
  }
})

/** The error object of an upstream body or `event: error`, if it is one. */
const errorObjectOf = (value: unknown): { readonly type: string | undefined; readonly message: string | undefined } | undefined => {
  if (!isRecord(value) || !isRecord(value.error)) return undefined
  const { message, type } = value.error
  return { type: typeof type === "string" ? type : undefined, message: typeof message === "string" ? message : undefined }
}

/** The upstream's refusal keeps its message; the client's error type follows from the status. */
const upstreamProblem = (status: number, body: string): Problem => {
  const error = errorObjectOf(parseJson(body))
  return {
    status,
    code: error?.type ?? "upstream_error",
    message: error?.message ?? `The upstream provider refused the request (status ${status}).`
  }
}

const streamError = (problem: Problem): string =>
  `event: error\ndata: ${JSON.stringify(providerBErrorBody(problem))}\n\n`

/** Input tokens the model read: uncached, written to and read from the prompt cache. */
const inputTokensOf = (usage: Record<string, unknown>): number =>
  numberAt(usage, "input_tokens") + numberAt(usage, "cache_creation_input_tokens") + numberAt(usage, "cache_read_input_tokens")

/** Characters of generated text in a content_block_delta: text, tool input JSON, thinking. */
const deltaChars = (delta: unknown): number => {
  if (!isRecord(delta)) return 0
  for (const key of ["text", "partial_json", "thinking"] as const) {
    const value = delta[key]
    if (typeof value === "string") return value.length
  }
  return 0
}

/**
 * Every event is named and carries a JSON object of the same type. message_start gives the input
 * tokens, message_delta the cumulative output tokens; unknown event names are relayed (the
 * client libraries yield them too), an `error` event ends the stream as the upstream's own error.
 */
const observe = (event: SseEvent, tally: StreamTally): boolean => {
  const data = parseJson(event.data)
  if (event.event === undefined || !isRecord(data) || typeof data.type !== "string") return false
  switch (data.type) {
    case "message_start": {
      const usage = isRecord(data.message) && isRecord(data.message.usage) ? data.message.usage : undefined
      if (usage === undefined) return false
      tally.inputTokens = inputTokensOf(usage)
      return true
    }
    case "content_block_delta":
      tally.generatedChars += deltaChars(data.delta)
      return true
    case "message_delta": {
      if (!isRecord(data.usage)) return false
      tally.outputTokens = numberAt(data.usage, "output_tokens")
      tally.reportedOutput = true
      if (typeof data.usage.input_tokens === "number") tally.inputTokens = inputTokensOf(data.usage)
      return true
    }
    case "message_stop":
      tally.terminated = true
      return true
    case "error": {
      const error = errorObjectOf(data)
      const type = error?.type !== undefined && statusOfType.has(error.type) ? error.type : "api_error"
      tally.upstreamError = {
        status: statusOfType.get(type) ?? 500,
        code: type,
        message: error?.message ?? "The upstream provider reported an error in the stream."
      }
      return false
    }
    default:
      return true
  }
}

/** Messages: JSON answers are Message objects; streams are named events message_start … message_stop. */
export const messagesProtocol: Protocol = {
  usageOfBody: (body) =>
    isRecord(body) && body.type === "message" && Array.isArray(body.content) && isRecord(body.usage)
      ? { inputTokens: inputTokensOf(body.usage), outputTokens: numberAt(body.usage, "output_tokens") }
      : undefined,
  observe,
  upstreamProblem,
  // 529 is the protocol's "overloaded": its clients know it (OverloadedError) and retry after the hint.
  passedServerStatuses: [529],
  streamError
}

/** Token counts: a JSON `{ input_tokens }`, which uses no tokens (nothing is generated, nothing billed). */
export const countTokensProtocol: Protocol = {
  ...messagesProtocol,
  usageOfBody: (body) => (isRecord(body) && typeof body.input_tokens === "number" ? { inputTokens: 0, outputTokens: 0 } : undefined)
}
