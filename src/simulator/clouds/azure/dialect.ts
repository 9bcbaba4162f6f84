// The azure kind's HTTP conventions: `{"error":{code,message}}` bodies, the `api-key` header (classic
// deployments take nothing else; the /openai/v1 API also a bearer), and its content-filter refusal.
import type { Dialect } from "../../dialect"
import { providerADialect } from "../../providerA/dialect"
import { bracketPath, type ErrorKind, SimulatorError } from "../../simulatorError"
import { dataEvent } from "../../../domain/sse"
import { refusedPromptResults } from "./contentFilter"

/** Codes the cloud puts on errors of each kind when the error has none of its own. */
const defaultCodes: Record<ErrorKind, string> = {
  invalid_request: "BadRequest",
  unprocessable: "BadRequest",
  authentication: "401",
  permission: "PermissionDenied",
  not_found: "404",
  request_too_large: "RequestEntityTooLarge",
  rate_limit: "429",
  server_error: "InternalServerError",
  overloaded: "ServiceUnavailable"
}

const errorObject = (error: SimulatorError) => {
  if (error.code === "content_filter") {
    return {
      message: error.message,
      type: null,
      param: "prompt",
      code: "content_filter",
      status: 400,
      innererror: { code: "ResponsibleAIPolicyViolation", content_filter_result: refusedPromptResults }
    }
  }
  const param = error.path === undefined || error.path.length === 0 ? undefined : bracketPath(error.path)
  return { code: error.code ?? defaultCodes[error.kind], message: error.message, ...(param === undefined ? {} : { param }) }
}

const accessDenied = new SimulatorError({
  kind: "authentication",
  message:
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."
})

const bearer = (header: (name: string) => string | undefined) => /^Bearer\s+(.+)$/i.exec(header("authorization") ?? "")?.[1]?.trim()

/** The classic deployments API: the key in `api-key` only. */
export const azureClassicDialect: Dialect = {
  errorStatus: providerADialect.errorStatus,
  errorBody: (error) => ({ error: errorObject(error) }),
  streamError: (error) => dataEvent({ error: errorObject(error) }),
  malformedEvent: providerADialect.malformedEvent,
  requestIdHeader: "apim-request-id",
  newRequestId: providerADialect.newRequestId,
  missingKey: accessDenied,
  wrongKey: accessDenied,
  credential: (header) => header("api-key")
}

/** The /openai/v1 API: `api-key`, or the key as a bearer token. */
export const azureV1Dialect: Dialect = {
  ...azureClassicDialect,
  credential: (header) => header("api-key") ?? bearer(header)
}
