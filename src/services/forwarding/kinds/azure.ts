import { Effect, Redacted } from "effect"
import type { AzureDeployment } from "../../../domain/deployments"
import { boundedSseDecoder, type SseEvent } from "../../../domain/sse"
import { providerAErrorBody } from "../../../providers/providerA/protocol"
import { isRecord, parseJson } from "../../../providers/protocol"
import { UpstreamFailure } from "../UpstreamClient"
import type { ErrorAnswer, UpstreamCall, UpstreamKind, UpstreamOperation } from "./UpstreamKind"

/**
 * provider_a on Azure (DESIGN "Upstreams: routes and deployments"). Classic deployments (`apiVersion` set):
 * `{url}/openai/deployments/{deployment}/{operation}?api-version=…`, the body without `model`; the /openai/v1 API
 * (no `apiVersion`): `{url}/openai/v1/{operation}` with the deployment as `model`. Always the `api-key` header,
 * never a bearer, never a workspace's own key (those go to native deployments only). What the cloud adds to
 * the chat format — its content filter's verdicts — is removed before the client sees it.
 */

/** The path of each operation the cloud serves for provider_a. */
const operationPaths: Partial<Record<UpstreamOperation, string>> = {
  chat_completions: "chat/completions",
  embeddings: "embeddings",
  responses: "responses"
}

const addressOf = (deployment: AzureDeployment, call: UpstreamCall, operationPath: string) => {
  const { model: _model, ...withoutModel } = call.body
  // The Responses API is only offered under /openai/v1, whichever API the deployment's other calls use.
  if (deployment.apiVersion === undefined || call.operation === "responses") {
    return { url: `${deployment.url}/openai/v1/${operationPath}`, body: { ...withoutModel, model: call.upstreamModel } }
  }
  return {
    url: `${deployment.url}/openai/deployments/${encodeURIComponent(call.upstreamModel)}/${operationPath}?api-version=${encodeURIComponent(deployment.apiVersion)}`,
    body: withoutModel
  }
}

const prepare = (deployment: AzureDeployment, call: UpstreamCall) => {
  const operationPath = operationPaths[call.operation]
  if (operationPath === undefined) {
    return Effect.fail(new UpstreamFailure({ kind: "unreachable", detail: `an azure deployment does not serve ${call.operation}` }))
  }
  const { body, url } = addressOf(deployment, call, operationPath)
  return Effect.succeed({
    url,
    method: "POST" as const,
    // Object.assign rather than a literal spreading the call's headers, which makes new maps each call (Node 20).
    headers: Object.assign({}, call.headers, { "content-type": "application/json", "api-key": Redacted.value(deployment.apiKey) }),
    body: JSON.stringify(body)
  })
}

/** Every choice without its verdict. */
const choicesWithoutResults = (choices: unknown): unknown =>
  Array.isArray(choices)
    ? choices.map((choice) => {
      if (!isRecord(choice) || !("content_filter_results" in choice)) return choice
      const { content_filter_results: _results, ...rest } = choice
      return rest
    })
    : choices

/** An answer or chunk without the verdicts on the prompt and on each choice. */
const withoutResults = (answer: Record<string, unknown>): Record<string, unknown> => {
  const { prompt_filter_results: _prompt, prompt_annotations: _annotations, ...rest } = answer
  return "choices" in rest ? { ...rest, choices: choicesWithoutResults(rest.choices) } : rest
}

/** Only chat answers carry verdicts: anything else is left as it came, unparsed. */
const carriesResults = (text: string) => text.includes("_filter_results") || text.includes("prompt_annotations")

/**
 * The prompt filter's chunk (no choices, the prompt's verdict, no usage) is not relayed: no client of the
 * provider's own API expects a chunk without id or object. Other chunks lose their verdicts.
 */
const relayEvent = (event: SseEvent): SseEvent | undefined => {
  if (!carriesResults(event.data)) return event
  const chunk = parseJson(event.data)
  if (!isRecord(chunk)) return event
  const promptOnly = Array.isArray(chunk.choices) && chunk.choices.length === 0 &&
    ("prompt_filter_results" in chunk || "prompt_annotations" in chunk) && (chunk.usage === undefined || chunk.usage === null)
  return promptOnly ? undefined : { ...event, data: JSON.stringify(withoutResults(chunk)) }
}

const jsonAnswer = (body: string): string => {
  if (!carriesResults(body)) return body
  const answer = parseJson(body)
  return isRecord(answer) ? JSON.stringify(withoutResults(answer)) : body
}

/** The chat format's code of a status, where the cloud's error has only a number for one. */
const codeOfStatus = (status: number): string =>
  status === 401
    ? "invalid_api_key"
    : status === 403
    ? "permission_denied"
    : status === 404
    ? "not_found"
    : status === 408
    ? "timeout"
    : status === 429
    ? "rate_limit_exceeded"
    : status >= 500
    ? "server_error"
    : "invalid_request_error"

const chatError = (status: number, code: string, message: string, param: string | undefined): ErrorAnswer => ({
  status,
  body: JSON.stringify(providerAErrorBody({ status, code, message, param }))
})

/**
 * The cloud's `{ error: { code, message, … } }` in the chat format's `{ error: { message, type, param, code } }`,
 * with the same status; a content-filter refusal is the chat format's 400 `content_filter` on `prompt`. A body
 * that is not the cloud's error (a proxy's page) is left as it came: the forwarding core reads it as any upstream's.
 */
const errorAnswer = (status: number, _headers: unknown, body: string): ErrorAnswer => {
  const parsed = parseJson(body)
  const error = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : undefined
  if (error === undefined) return { status, body }
  const text = (field: string) => (typeof error[field] === "string" && error[field] !== "" ? (error[field] as string) : undefined)
  const inner = isRecord(error.innererror) ? error.innererror : undefined
  if (text("code") === "content_filter" || inner?.code === "ResponsibleAIPolicyViolation") {
    return chatError(400, "content_filter", text("message") ?? "The prompt was refused by the content filter.", "prompt")
  }
  const code = text("code")
  return chatError(
    status,
    code === undefined || /^\d+$/.test(code) ? codeOfStatus(status) : code,
    text("message") ?? `The upstream refused the request (status ${status}).`,
    text("param")
  )
}

export const azureKind: UpstreamKind<AzureDeployment> = {
  kind: "azure",
  secrets: (deployment) => [Redacted.value(deployment.apiKey)],
  prepare,
  streamContentType: "text/event-stream",
  streamDecoder: boundedSseDecoder,
  errorAnswer,
  jsonAnswer,
  relayEvent
}
