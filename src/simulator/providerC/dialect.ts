// provider_c's HTTP conventions: `{"object":"error",message,type,param,code}` bodies, 422 `{"detail":[…]}`
// validation bodies, and plain `{"message"}` bodies from its gateway for auth and rate limits.
import type { Dialect } from "../dialect"
import { randomId } from "../ids"
import { type ErrorKind, SimulatorError } from "../simulatorError"
import { dataEvent } from "../../domain/sse"

const statuses: Record<ErrorKind, number> = {
  invalid_request: 400,
  unprocessable: 422,
  authentication: 401,
  permission: 403,
  not_found: 404,
  request_too_large: 413,
  rate_limit: 429,
  server_error: 500,
  overloaded: 503
}

const errorTypes: Record<ErrorKind, string> = {
  invalid_request: "invalid_request_error",
  unprocessable: "invalid_request_error",
  authentication: "authentication_error",
  permission: "permission_error",
  not_found: "not_found_error",
  request_too_large: "invalid_request_error",
  rate_limit: "rate_limit_error",
  server_error: "internal_server_error",
  overloaded: "service_unavailable_error"
}

const errorObject = (error: SimulatorError) => ({
  object: "error",
  message: error.message,
  type: error.code === "invalid_model" ? "invalid_model" : errorTypes[error.kind],
  param: null,
  code: error.code === "invalid_model" ? "1500" : null
})

export const providerCDialect: Dialect = {
  errorStatus: (kind) => statuses[kind],
  errorBody: (error, requestId) => {
    switch (error.kind) {
      case "unprocessable":
        return {
          detail: [
            {
              type: error.code === "missing_required_parameter" ? "missing" : error.code === "unknown_parameter" ? "extra_forbidden" : "value_error",
              loc: ["body", ...(error.path ?? [])],
              msg: error.code === "missing_required_parameter" ? "Field required" : error.message
            }
          ]
        }
      case "authentication":
      case "rate_limit":
        return { message: error.message, request_id: requestId }
      default:
        return errorObject(error)
    }
  },
  streamError: (error) => dataEvent(errorObject(error)),
  malformedEvent: 'data: {"id":"cmpl-broken","object":"chat.completion.chunk","choices":[{"delta":\n\n',
  requestIdHeader: "x-request-id",
  newRequestId: randomId("", 32, "hex"),
  missingKey: new SimulatorError({ kind: "authentication", message: "Unauthorized" }),
  wrongKey: new SimulatorError({ kind: "authentication", message: "Unauthorized" })
}
