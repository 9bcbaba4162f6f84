import { HttpApiError, HttpServerError } from "@effect/platform"
import { Cause, Option } from "effect"
import type { Problem } from "../domain/problem"
import { decodeProblem, malformedBody, noEndpoint, tooDeep, tooLarge } from "../api/requestProblems"

export { isJsonOrUndeclared, tooLarge, unsupportedMediaType } from "../api/requestProblems"

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
