// Bedrock's errors: a JSON `{ "message" }` named by the `x-amzn-ErrorType` header, and the exception frames of a
// stream (`:exception-type` is the name with its first letter lower-cased).
import { HttpServerResponse } from "@effect/platform"
import type { ErrorKind } from "../../simulatorError"

export interface BedrockException {
  /** e.g. ThrottlingException. */
  readonly name: string
  readonly status: number
  readonly message: string
}

export const bedrockException = (name: string, status: number, message: string): BedrockException => ({ name, status, message })

/** The exception Bedrock answers for what the messages simulation refused. */
export const exceptionOfKind = (kind: ErrorKind, message: string): BedrockException => {
  switch (kind) {
    case "invalid_request":
    case "unprocessable":
    case "request_too_large":
      return bedrockException("ValidationException", 400, message)
    case "authentication":
    case "permission":
      return bedrockException("AccessDeniedException", 403, message)
    case "not_found":
      return bedrockException("ResourceNotFoundException", 404, message)
    case "rate_limit":
      return bedrockException("ThrottlingException", 429, message)
    case "server_error":
      return bedrockException("InternalServerException", 500, message)
    case "overloaded":
      return bedrockException("ServiceUnavailableException", 503, message)
  }
}

/** The exception of an arbitrary status, for the `status=NNN` control. */
export const exceptionOfStatus = (status: number): BedrockException => {
  const message = `Simulated status ${status}.`
  switch (status) {
    case 403:
      return bedrockException("AccessDeniedException", 403, message)
    case 404:
      return bedrockException("ResourceNotFoundException", 404, message)
    case 408:
      return bedrockException("ModelTimeoutException", 408, message)
    case 424:
      return bedrockException("ModelErrorException", 424, message)
    case 429:
      return bedrockException("ThrottlingException", 429, message)
    case 503:
      return bedrockException("ServiceUnavailableException", 503, message)
    default:
      return bedrockException(status < 500 ? "ValidationException" : "InternalServerException", status, message)
  }
}

/** The service's namespace in the header, as Bedrock sends it (clients read the part before the colon). */
const errorTypeHeader = (name: string) => `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/`

export const exceptionResponse = (exception: BedrockException, requestId: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(
    { message: exception.message },
    { status: exception.status, headers: { "x-amzn-errortype": errorTypeHeader(exception.name), "x-amzn-requestid": requestId } }
  )

/** The `:exception-type` of a stream's exception frame: throttlingException, internalServerException, … */
export const exceptionFrameType = (exception: BedrockException): string =>
  exception.name.charAt(0).toLowerCase() + exception.name.slice(1)
