import { HttpApiError, HttpServerError } from "@effect/platform"
import { Cause, Option } from "effect"
import { fromFormatterIssues, malformedJsonIssue } from "../domain/validationIssue"
import type { Problem } from "./errorFormat"

/** A request body that does not decode into the endpoint's payload, naming the first bad field. */
export const decodeProblem = (error: HttpApiError.HttpApiDecodeError): Problem => {
  const { message, param } = fromFormatterIssues(error.issues)
  const missing = error.issues.some((issue) => issue._tag === "Missing")
  return param === null
    ? { status: 400, code: "invalid_request", message }
    : { status: 400, code: missing ? "missing_required_parameter" : "invalid_value", message, param }
}

export const malformedBody: Problem = {
  status: 400,
  code: "invalid_json",
  message: `${malformedJsonIssue.message} Send a JSON object with Content-Type: application/json.`
}

export const tooDeep: Problem = {
  status: 400,
  code: "invalid_json",
  message: "The request body is nested too deeply. Send a JSON object of ordinary depth."
}

export const unsupportedMediaType = (contentType: string): Problem => ({
  status: 415,
  code: "unsupported_media_type",
  message: `Content-Type '${contentType}' is not supported: send the body as JSON with Content-Type: application/json.`
})

/** Whether a request's body is to be read as JSON: declared so, or not declared at all. */
export const isJsonOrUndeclared = (contentType: string | undefined): boolean => {
  const type = contentType?.split(";")[0]?.trim().toLowerCase() ?? ""
  return type === "" || type === "application/json" || type.endsWith("+json")
}

export const tooLarge = (limit: number): Problem => ({
  status: 413,
  code: "request_too_large",
  message: `The request body is larger than the limit of ${limit} bytes.`
})

/**
 * What the framework itself can fail with before a handler runs (a body that does not decode, a
 * route that does not exist, a body that is not JSON or too large), as a format-neutral problem.
 * Anything else is not ours to describe and stays None.
 */
export const failureToProblem = (cause: Cause.Cause<unknown>, bodyLimit: number): Option.Option<Problem> => {
  const failure = Cause.squash(cause)
  if (failure instanceof HttpApiError.HttpApiDecodeError) return Option.some(decodeProblem(failure))
  if (failure instanceof HttpServerError.RouteNotFound) {
    return Option.some({ status: 404, code: "not_found", message: `No endpoint ${failure.request.method} ${failure.request.url}.` })
  }
  // A body nested so deep that reading or checking it overflowed the stack (JSON such as
  // [[[[…]]]] 100,000 deep): the caller's body is at fault, not the service.
  if (failure instanceof RangeError && /call stack/i.test(failure.message)) return Option.some(tooDeep)
  if (failure instanceof HttpServerError.RequestError) {
    const text = String(failure.cause ?? failure.description ?? "")
    return Option.some(/max|limit|too large/i.test(text) ? tooLarge(bodyLimit) : malformedBody)
  }
  return Option.none()
}
