// provider_a's HTTP conventions: `{"error":{message,type,param,code}}` bodies and x-request-id.
import type { Dialect } from "../dialect"
import { randomId } from "../ids"
import { bracketPath, type ErrorKind, SimulatorError } from "../simulatorError"
import { dataEvent } from "../../domain/sse"

const statuses: Record<ErrorKind, number> = {
  invalid_request: 400,
  unprocessable: 400,
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
  authentication: "invalid_request_error",
  permission: "invalid_request_error",
  not_found: "invalid_request_error",
  request_too_large: "invalid_request_error",
  rate_limit: "requests",
  server_error: "server_error",
  overloaded: "server_error"
}

const defaultCodes: Partial<Record<ErrorKind, string>> = { rate_limit: "rate_limit_exceeded" }

const errorObject = (error: SimulatorError) => {
  const param = error.path === undefined || error.path.length === 0 ? null : bracketPath(error.path)
  const message =
    param === null
      ? error.message
      : error.code === "missing_required_parameter"
        ? `Missing required parameter: '${param}'.`
        : error.code === "invalid_value"
          ? `Invalid '${param}': ${error.message}`
          : error.message
  return { message, type: errorTypes[error.kind], param, code: error.code ?? defaultCodes[error.kind] ?? null }
}

export const providerADialect: Dialect = {
  errorStatus: (kind) => statuses[kind],
  errorBody: (error) => ({ error: errorObject(error) }),
  streamError: (error) => dataEvent({ error: errorObject(error) }),
  malformedEvent: 'data: {"id":"chatcmpl-broken","object":"chat.completion.chunk","choices":[{"delta":\n\n',
  requestIdHeader: "x-request-id",
  newRequestId: randomId("req_", 32, "hex"),
  missingKey: new SimulatorError({
    kind: "authentication",
    message:
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
  }),
  wrongKey: new SimulatorError({ kind: "authentication", message: "Incorrect API key provided.", code: "invalid_api_key" })
}
