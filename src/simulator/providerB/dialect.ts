// provider_b's HTTP conventions: `{"type":"error","error":{type,message},"request_id"}` bodies, request-id,
// 529 for overload, and `event: error` inside streams.
import type { Dialect } from "../dialect"
import { randomId } from "../ids"
import { dottedPath, type ErrorKind, SimulatorError } from "../simulatorError"
import { namedEvent } from "../../domain/sse"

const statuses: Record<ErrorKind, number> = {
  invalid_request: 400,
  unprocessable: 400,
  authentication: 401,
  permission: 403,
  not_found: 404,
  request_too_large: 413,
  rate_limit: 429,
  server_error: 500,
  overloaded: 529
}

const errorTypes: Record<ErrorKind, string> = {
  invalid_request: "invalid_request_error",
  unprocessable: "invalid_request_error",
  authentication: "authentication_error",
  permission: "permission_error",
  not_found: "not_found_error",
  request_too_large: "request_too_large",
  rate_limit: "rate_limit_error",
  server_error: "api_error",
  overloaded: "overloaded_error"
}

const errorObject = (error: SimulatorError) => {
  const field = error.path === undefined || error.path.length === 0 ? undefined : dottedPath(error.path)
  const message =
    field === undefined
      ? error.message
      : error.code === "missing_required_parameter"
        ? `${field}: Field required`
        : error.code === "invalid_value" || error.code === "unknown_parameter"
          ? `${field}: ${error.message}`
          : error.message
  return { type: errorTypes[error.kind], message }
}

export const providerBDialect: Dialect = {
  errorStatus: (kind) => statuses[kind],
  errorBody: (error, requestId) => ({ type: "error", error: errorObject(error), request_id: requestId }),
  streamError: (error) => namedEvent("error", { type: "error", error: errorObject(error) }),
  malformedEvent: 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":\n\n',
  requestIdHeader: "request-id",
  newRequestId: randomId("req_011C", 20),
  missingKey: new SimulatorError({ kind: "authentication", message: "x-api-key header is required" }),
  wrongKey: new SimulatorError({ kind: "authentication", message: "invalid x-api-key" })
}
