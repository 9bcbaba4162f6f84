// The cloud's errors in the messages API's own format: its `{ error: { code, message, status } }` (or a list of
// them, as its streaming methods answer) becomes `{"type":"error","error":{type,message}}` with the status the
// messages API gives that refusal; bodies already in the messages format (the model's own refusals) pass through.
import { Option, Schema } from "effect"
import type { ErrorAnswer } from "./UpstreamKind"

const CloudError = Schema.Struct({
  error: Schema.Struct({ code: Schema.optional(Schema.Number), message: Schema.optional(Schema.String), status: Schema.optional(Schema.String) })
})
const CloudErrorBody = Schema.parseJson(Schema.Union(CloudError, Schema.Tuple([CloudError], Schema.Unknown)))

const MessagesErrorBody = Schema.parseJson(
  Schema.Struct({ type: Schema.Literal("error"), error: Schema.Struct({ type: Schema.String, message: Schema.String }) })
)

/** The cloud's status names → the messages API's status and error type. */
const byCloudStatus: Readonly<Record<string, { readonly status: number; readonly type: string }>> = {
  RESOURCE_EXHAUSTED: { status: 429, type: "rate_limit_error" },
  UNAUTHENTICATED: { status: 401, type: "authentication_error" },
  PERMISSION_DENIED: { status: 403, type: "permission_error" },
  NOT_FOUND: { status: 404, type: "not_found_error" },
  INVALID_ARGUMENT: { status: 400, type: "invalid_request_error" },
  UNAVAILABLE: { status: 503, type: "overloaded_error" }
}

/** The messages API's error type of an HTTP status, for answers that say no more than their status. */
const typeOfStatus = (status: number): string =>
  status === 400
    ? "invalid_request_error"
    : status === 401
    ? "authentication_error"
    : status === 403
    ? "permission_error"
    : status === 404
    ? "not_found_error"
    : status === 413
    ? "request_too_large"
    : status === 429
    ? "rate_limit_error"
    : status === 503 || status === 529
    ? "overloaded_error"
    : "api_error"

const messagesError = (status: number, type: string, message: string): ErrorAnswer => ({
  status,
  body: JSON.stringify({ type: "error", error: { type, message } })
})

export const vertexErrorAnswer = (status: number, body: string): ErrorAnswer => {
  if (Option.isSome(Schema.decodeUnknownOption(MessagesErrorBody)(body))) return { status, body }
  const cloud = Schema.decodeUnknownOption(CloudErrorBody)(body)
  if (Option.isSome(cloud)) {
    const { error } = "error" in cloud.value ? cloud.value : cloud.value[0]
    const known = error.status === undefined ? undefined : byCloudStatus[error.status]
    const message = error.message ?? `The upstream answered ${error.status ?? status}.`
    return known === undefined ? messagesError(status, "api_error", message) : messagesError(known.status, known.type, message)
  }
  return messagesError(status, typeOfStatus(status), `The upstream answered ${status}.`)
}
