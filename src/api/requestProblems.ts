import { HttpApiError, HttpServerError } from "@effect/platform"
import { Cause, Either, Option, ParseResult, Schema } from "effect"
import { maxJsonDepth } from "../domain/jsonDepth"
import type { Problem } from "../domain/problem"
import { InvalidRequest } from "../domain/refusals"
import { fromFormatterIssues, malformedJsonIssue, wirePath } from "../domain/validationIssue"

// The problems of a request as the framework reads it (size, type, JSON, payload), whichever path
// serves it: the HttpApi app (through failureToProblem) or the forwarding lane.

/** A request body that does not decode into the endpoint's payload, naming the first bad field. */
export const decodeProblem = (error: HttpApiError.HttpApiDecodeError): Problem => {
  const { message, param } = fromFormatterIssues(error.issues)
  // The named field's own issue decides (a body decoded with `errors: "all"` may also miss another field).
  const missing = error.issues.some((issue) => issue._tag === "Missing" && wirePath(issue.path) === param)
  return param === null
    ? { status: 400, code: "invalid_request", message }
    : { status: 400, code: missing ? "missing_required_parameter" : "invalid_value", message, param }
}

/** No endpoint at this method and path (inside BASE_PATH or outside it). */
export const noEndpoint = (method: string, url: string): Problem => ({
  status: 404,
  code: "not_found",
  message: `No endpoint ${method} ${url}.`
})

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

/** A body nested deeper than maxJsonDepth, `field` the path of the value found too deep (its first segments). */
export const nestedTooDeep = (field: string): Problem => ({
  status: 400,
  code: "invalid_value",
  message: `${field}: nested more than ${maxJsonDepth} levels deep. Send JSON of ordinary depth.`,
  param: field
})

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
 * Effect's parser throws on a union's tag that is an object which cannot be turned into text (JSON
 * such as `{"type": {"toString": 0}}`): the body is refused, not answered with a 500.
 */
const unreadableBody: Problem = {
  status: 400,
  code: "invalid_request",
  message: "The request body is invalid: a field that names a type holds an object where text was expected."
}

/**
 * The payload as the endpoint declares it, or the 400 HttpApi would answer (first bad field named). Made once
 * per schema; a plain function (an Either is also an effect): the forwarded endpoints call it inside the step
 * that read the body, so a decode adds no step of its own to the request's fiber, and no error handler.
 */
export const payloadDecoder = <A, I>(schema: Schema.Schema<A, I>) => {
  // Synchronous: the request schemas have no asynchronous part.
  const decode = Schema.decodeUnknownEither(schema)
  return (body: unknown): Either.Either<A, InvalidRequest> => {
    // Effect's parser throws on a union's tag that cannot be turned into text: that body is refused.
    const outcome = Either.try(() => decode(body))
    if (Either.isLeft(outcome)) return Either.left(new InvalidRequest({ problem: unreadableBody }))
    const decoded = outcome.right
    if (Either.isRight(decoded)) return Either.right(decoded.right)
    // As HttpApiDecodeError.fromParseError makes it, without running its effect.
    const error = new HttpApiError.HttpApiDecodeError({
      issues: ParseResult.ArrayFormatter.formatErrorSync(decoded.left),
      message: ParseResult.TreeFormatter.formatErrorSync(decoded.left)
    })
    return Either.left(new InvalidRequest({ problem: decodeProblem(error) }))
  }
}

/**
 * What the framework itself can fail with before a handler runs (a body that does not decode, a
 * route that does not exist, a body that is not JSON or too large), as a format-neutral problem.
 * Anything else is not ours to describe and stays None.
 */
export const failureToProblem = (cause: Cause.Cause<unknown>, bodyLimit: number): Option.Option<Problem> => {
  const failure = Cause.squash(cause)
  if (failure instanceof HttpApiError.HttpApiDecodeError) return Option.some(decodeProblem(failure))
  if (failure instanceof HttpServerError.RouteNotFound) {
    return Option.some(noEndpoint(failure.request.method, failure.request.url))
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
