import type { Problem } from "../../domain/problem"
import type { SseEvent } from "../../domain/sse"
import { providerAErrorType } from "../providerA/protocol"
import { isRecord, numberAt, parseJson, type Protocol, type StreamTally } from "../protocol"

/**
 * `{ object: "error", message, type, param, code }`: the error body of the FIM protocol, and the
 * data of its in-band stream error. Its types follow the chat-completions names of each status.
 */
export const providerCErrorBody = (problem: Problem) => ({
  object: "error" as const,
  message: problem.message,
  type: providerAErrorType(problem.status),
  param: problem.param ?? null,
  code: problem.code
})

const text = (record: Record<string, unknown>, key: string): string | undefined =>
  typeof record[key] === "string" ? (record[key] as string) : undefined

/**
 * The upstream answers errors in three shapes: `{ object: "error", message, type, param, code }`,
 * validation errors as `{ detail: [{ loc, msg, type }] }`, and its gateway's `{ message }`. The
 * message and the offending field are kept.
 */
const upstreamProblem = (status: number, body: string): Problem => {
  const parsed = parseJson(body)
  const fallback = `The upstream provider refused the request (status ${status}).`
  if (!isRecord(parsed)) return { status, code: "upstream_error", message: fallback }
  const detail = Array.isArray(parsed.detail) && isRecord(parsed.detail[0]) ? parsed.detail[0] : undefined
  if (detail !== undefined) {
    // loc is ["body", "field", 0, …]: the field in wire notation.
    const loc = Array.isArray(detail.loc) ? detail.loc.slice(detail.loc[0] === "body" ? 1 : 0) : []
    const param = loc.map((part, i) => (typeof part === "number" ? `[${part}]` : `${i === 0 ? "" : "."}${String(part)}`)).join("")
    const msg = text(detail, "msg") ?? fallback
    return {
      status,
      code: text(detail, "type") ?? "invalid_value",
      message: param === "" ? msg : `${param}: ${msg}`,
      param: param === "" ? undefined : param
    }
  }
  return {
    status,
    code: text(parsed, "code") ?? text(parsed, "type") ?? "upstream_error",
    message: text(parsed, "message") ?? fallback,
    param: text(parsed, "param")
  }
}

const streamError = (problem: Problem): string => `data: ${JSON.stringify(providerCErrorBody(problem))}\n\n`

const usageOf = (usage: unknown) =>
  isRecord(usage) ? { inputTokens: numberAt(usage, "prompt_tokens"), outputTokens: numberAt(usage, "completion_tokens") } : undefined

/**
 * A complete answer as the FIM client library validates it: string id, object and model, integer
 * created, a usage object, and every choice with an integer index and a non-null finish_reason.
 * Anything less would fail in the client, so it is the upstream's malformed answer.
 */
const isFimCompletion = (body: Record<string, unknown>): boolean =>
  typeof body.id === "string" &&
  typeof body.object === "string" &&
  typeof body.model === "string" &&
  Number.isInteger(body.created) &&
  isRecord(body.usage) &&
  Array.isArray(body.choices) &&
  body.choices.every((choice) => isRecord(choice) && Number.isInteger(choice.index) && typeof choice.finish_reason === "string")

const observe = (event: SseEvent, tally: StreamTally): boolean => {
  if (event.data === "[DONE]") {
    tally.terminated = true
    return true
  }
  const chunk = parseJson(event.data)
  if (!isRecord(chunk)) return false
  if (chunk.object === "error" || chunk.error !== undefined) {
    const error = isRecord(chunk.error) ? chunk.error : chunk
    tally.upstreamError = {
      status: 502,
      code: text(error, "code") ?? text(error, "type") ?? "upstream_error",
      message: text(error, "message") ?? "The upstream provider reported an error in the stream."
    }
    return false
  }
  if (!Array.isArray(chunk.choices)) return false
  for (const choice of chunk.choices) {
    const content = isRecord(choice) && isRecord(choice.delta) ? choice.delta.content : undefined
    if (typeof content === "string") tally.generatedChars += content.length
  }
  const usage = usageOf(chunk.usage)
  if (usage) {
    tally.inputTokens = usage.inputTokens
    tally.outputTokens = usage.outputTokens
    tally.reportedOutput = true
  }
  return true
}

/**
 * The client library requires the finish_reason key in every streamed choice (null until the
 * last): a chunk whose choices lack it gets it, as null. Others pass unchanged, unparsed.
 */
export const withFinishReason = (event: SseEvent): SseEvent => {
  if (event.data === "[DONE]" || event.data.includes('"finish_reason"')) return event
  const chunk = parseJson(event.data)
  if (!isRecord(chunk) || !Array.isArray(chunk.choices)) return event
  const choices = chunk.choices.map((choice) => (isRecord(choice) && !("finish_reason" in choice) ? { ...choice, finish_reason: null } : choice))
  return { ...event, data: JSON.stringify({ ...chunk, choices }) }
}

/** FIM completions: JSON answers shaped like chat completions; streams are data-only chunks ending with [DONE]. */
export const fimProtocol: Protocol = {
  usageOfBody: (body) => (isRecord(body) && isFimCompletion(body) ? usageOf(body.usage) : undefined),
  observe,
  upstreamProblem,
  streamError
}
