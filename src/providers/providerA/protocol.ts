import type { Problem } from "../../domain/problem"
import type { SseEvent } from "../../domain/sse"
import { firstMemberIn, hasListAt, memberKey, trailingUsage } from "../largeAnswer"
import { isRecord, numberAt, parseJson, type Protocol, type StreamTally } from "../protocol"

/** The chat-completions error type of each status, as the client library exposes it (`err.type`). */
export const providerAErrorType = (status: number): string =>
  status === 401
    ? "authentication_error"
    : status === 403
    ? "permission_error"
    : status === 404
    ? "not_found_error"
    : status === 429
    ? "rate_limit_error"
    : status >= 500
    ? "server_error"
    : "invalid_request_error"

/** The chat-completions error object, as the client library reads it. */
export const providerAErrorBody = (problem: Problem) => ({
  error: { message: problem.message, type: providerAErrorType(problem.status), param: problem.param ?? null, code: problem.code }
})

const upstreamProblem = (status: number, body: string): Problem => {
  const parsed = parseJson(body)
  const error = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : undefined
  const text = (key: string) => (error && typeof error[key] === "string" ? (error[key] as string) : undefined)
  return {
    status,
    code: text("code") ?? text("type") ?? "upstream_error",
    message: text("message") ?? `The upstream provider refused the request (status ${status}).`,
    param: text("param")
  }
}

const streamError = (problem: Problem): string => `data: ${JSON.stringify(providerAErrorBody(problem))}\n\n`

const usageOf = (usage: unknown) =>
  isRecord(usage) ? { inputTokens: numberAt(usage, "prompt_tokens"), outputTokens: numberAt(usage, "completion_tokens") } : undefined

/** Characters of generated text in one chunk: content and tool-call arguments. */
const generatedChars = (choices: unknown): number => {
  if (!Array.isArray(choices)) return 0
  let chars = 0
  for (const choice of choices) {
    const delta = isRecord(choice) && isRecord(choice.delta) ? choice.delta : undefined
    if (!delta) continue
    if (typeof delta.content === "string") chars += delta.content.length
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) {
        const args = isRecord(call) && isRecord(call.function) ? call.function.arguments : undefined
        if (typeof args === "string") chars += args.length
      }
    }
  }
  return chars
}

const observe = (event: SseEvent, tally: StreamTally): boolean => {
  if (event.data === "[DONE]") {
    tally.terminated = true
    return true
  }
  const chunk = parseJson(event.data)
  if (!isRecord(chunk) || chunk.error !== undefined || !Array.isArray(chunk.choices)) return false
  tally.generatedChars += generatedChars(chunk.choices)
  const usage = usageOf(chunk.usage)
  if (usage) {
    tally.inputTokens = usage.inputTokens
    tally.outputTokens = usage.outputTokens
    tally.reportedOutput = true
  }
  return true
}

/** Chat completions: JSON answers carry `choices` and `usage`; streams are data-only chunks ending with [DONE]. */
export const chatCompletionsProtocol: Protocol = {
  usageOfBody: (body) => (isRecord(body) && Array.isArray(body.choices) ? usageOf(body.usage) ?? { inputTokens: 0, outputTokens: 0 } : undefined),
  observe,
  upstreamProblem,
  streamError
}

const dataKey = memberKey("data")
/** An embeddings answer opens with its `object` or its `data`. */
const embeddingsFirstKeys = [memberKey("object"), dataKey]

/** Embeddings: JSON only; usage has prompt tokens alone. */
export const embeddingsProtocol: Protocol = {
  usageOfBody: (body) =>
    isRecord(body) && Array.isArray(body.data)
      ? { inputTokens: isRecord(body.usage) ? numberAt(body.usage, "prompt_tokens") : 0, outputTokens: 0 }
      : undefined,
  // A list of vectors is tens of kilobytes of numbers: decoding or parsing it only to read the usage at its end
  // cost more than the rest of the request. Its framing and usage are checked; the list is relayed.
  usageOfLargeAnswer: (bytes) => {
    const usage = trailingUsage(bytes)
    return usage !== undefined && firstMemberIn(bytes, embeddingsFirstKeys) && hasListAt(bytes, dataKey)
      ? { inputTokens: numberAt(usage, "prompt_tokens"), outputTokens: 0 }
      : undefined
  },
  observe: () => false,
  upstreamProblem,
  streamError
}
