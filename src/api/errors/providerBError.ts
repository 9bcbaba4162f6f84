import { Schema } from "effect"
import { ProviderBErrorBody } from "../schemas/messages"
import { statusVariants } from "./statusVariants"

/** Error of the messages protocol: `{ type: "error", error: { type, message } }`. */
export class ProviderBError extends Schema.TaggedError<ProviderBError>()("ProviderBError", {
  status: Schema.Number,
  type: Schema.String,
  message: Schema.String
}) {}

/** The protocol's error type for each status, as its client library expects. */
export const providerBErrorType = (status: number): string => {
  switch (status) {
    case 413:
      return "request_too_large"
    case 400:
    case 415:
      return "invalid_request_error"
    case 401:
      return "authentication_error"
    case 403:
      return "permission_error"
    case 404:
      return "not_found_error"
    case 429:
      return "rate_limit_error"
    case 504:
      return "timeout_error"
    case 503:
    case 529:
      return "overloaded_error"
    default:
      return "api_error"
  }
}

export const providerBErrorSchema = statusVariants(
  ProviderBError,
  ProviderBErrorBody,
  (e) => ({ type: "error" as const, error: { type: e.type, message: e.message } }),
  (body, status) => new ProviderBError({ status, ...body.error })
)
