import type { Problem } from "../../domain/problem"
import type { SseEvent } from "../../domain/sse"
import { isRecord, numberAt, parseJson, type Protocol, type StreamTally } from "../protocol"
import { chatCompletionsProtocol, providerAErrorBody } from "./protocol"
import { terminalEvents } from "./responsesWire"

/** A response object's usage: `input_tokens` and `output_tokens` (cached and reasoning tokens are within them). */
const usageOf = (usage: unknown) =>
  isRecord(usage) ? { inputTokens: numberAt(usage, "input_tokens"), outputTokens: numberAt(usage, "output_tokens") } : undefined

/** The events whose `delta` is generated text: what a stream cut before its usage is billed for. */
const generatedDeltas: ReadonlySet<string> = new Set([
  "response.output_text.delta",
  "response.refusal.delta",
  "response.function_call_arguments.delta",
  "response.custom_tool_call_input.delta",
  "response.reasoning_text.delta",
  "response.reasoning_summary_text.delta"
])

const text = (record: Record<string, unknown>, key: string): string | undefined =>
  typeof record[key] === "string" ? (record[key] as string) : undefined

/** The upstream's in-band `error` event (`{ type: "error", code, message, param }`) as a problem. */
const errorEventProblem = (event: Record<string, unknown>): Problem => {
  const code = text(event, "code") ?? "server_error"
  return {
    status: code === "rate_limit_exceeded" ? 429 : 500,
    code,
    message: text(event, "message") ?? "The upstream provider reported an error in the stream.",
    param: text(event, "param")
  }
}

/**
 * Every event is JSON with its `type` (the SSE event name repeats it). The stream ends with the response itself
 * (completed, incomplete or failed), which carries the usage; `error` is the upstream's in-band failure.
 */
const observe = (event: SseEvent, tally: StreamTally): boolean => {
  // Not sent by the provider, but harmless where a proxy adds it.
  if (event.data === "[DONE]") return true
  const data = parseJson(event.data)
  if (!isRecord(data) || typeof data.type !== "string") return false
  const type = data.type
  if (generatedDeltas.has(type)) {
    if (typeof data.delta === "string") tally.generatedChars += data.delta.length
    return true
  }
  if (terminalEvents.has(type)) {
    const usage = isRecord(data.response) ? usageOf(data.response.usage) : undefined
    if (usage !== undefined) {
      tally.inputTokens = usage.inputTokens
      tally.outputTokens = usage.outputTokens
      tally.reportedOutput = true
    }
    tally.terminated = true
    return true
  }
  if (type === "error") {
    tally.upstreamError = errorEventProblem(data)
    return false
  }
  return true
}

/**
 * The in-band error: an `error` event as the provider sends one (type, code, message, param), with the error
 * object the client library throws from (it raises any event whose data has `error`).
 */
const streamError = (problem: Problem): string => {
  const { error } = providerAErrorBody(problem)
  return `event: error\ndata: ${JSON.stringify({ type: "error", code: error.code, message: error.message, param: error.param, error })}\n\n`
}

/** The Responses API: JSON answers are response objects with `usage`; streams are typed events ending with the response. */
export const responsesProtocol: Protocol = {
  usageOfBody: (body) =>
    isRecord(body) && body.object === "response" ? usageOf(body.usage) ?? { inputTokens: 0, outputTokens: 0 } : undefined,
  observe,
  // Errors before the first byte are the chat-completions error object.
  upstreamProblem: chatCompletionsProtocol.upstreamProblem,
  streamError
}
