import { HttpClient, HttpClientError, type HttpClientResponse, HttpClientRequest } from "@effect/platform"
import { Data, Effect, ParseResult } from "effect"

/**
 * A call of the service that failed, said in one line: what went wrong and what to check. The CLI prints
 * this line and nothing else (never a schema-decoding tree or a stack).
 */
export class CliRequestFailed extends Data.TaggedError("CliRequestFailed")<{ readonly message: string }> {}

/** What an operator checks when the CLI talks to the wrong place. */
export const checkUrl = "check WORKSPACE_API_URL: the service's address with its BASE_PATH (default http://127.0.0.1:$PORT$BASE_PATH)"

/** Which credential a call presents, for the hint of a 401. */
export type Credential = "adminToken" | "apiKey"

const checkCredential: Record<Credential, string> = {
  adminToken: "check ADMIN_TOKEN (default: adminToken in DATA_DIR/secrets.json, as the service that runs there saved it)",
  apiKey: "check the key (--key or WORKSPACE_API_KEY): not revoked, of this service, with the scope USAGE_EXPORT_API"
}

const isJsonType = (contentType: string | undefined): boolean => {
  const type = contentType?.split(";")[0]?.trim().toLowerCase() ?? ""
  return type === "application/json" || type.endsWith("+json")
}

/** Why a connection failed, from the socket error's code (undici puts it on the error or its cause). */
const transportReason = (error: HttpClientError.RequestError): string => {
  const codeOf = (value: unknown): string | undefined =>
    typeof value === "object" && value !== null && "code" in value && typeof value.code === "string" ? value.code : undefined
  const cause = error.cause
  const code = codeOf(cause) ?? (typeof cause === "object" && cause !== null && "cause" in cause ? codeOf(cause.cause) : undefined)
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused (is the service running there?)"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "unknown host"
    case "ECONNRESET":
      return "the connection was reset"
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return "the connection timed out"
    default:
      return code ?? (cause instanceof Error ? cause.message : error.reason)
  }
}

const transportFailure = (error: HttpClientError.RequestError): CliRequestFailed => {
  const url = error.request.url
  if (error.reason === "InvalidUrl") return new CliRequestFailed({ message: `${url} is not a URL: ${checkUrl}` })
  return new CliRequestFailed({ message: `cannot reach ${new URL(url).origin}: ${transportReason(error)}; ${checkUrl}` })
}

const hasJsonOrNoBody = (response: HttpClientResponse.HttpClientResponse): boolean =>
  // An empty answer is a success's (204, or a void answer), never the service's error.
  (response.status < 300 && (response.status === 204 || response.headers["content-length"] === "0")) || isJsonType(response.headers["content-type"])

/** An answer that is not JSON (an HTML page, a proxy's text) comes from something else than the service. */
const notTheService = (response: HttpClientResponse.HttpClientResponse): string => {
  const contentType = response.headers["content-type"]
  return `${response.request.method} ${response.request.url} answered ${response.status} ${
    contentType === undefined ? "without a content type" : contentType.split(";")[0]
  }, not the service's JSON: ${checkUrl}`
}

/**
 * The CLI's HTTP client: an answer with a body that is not JSON fails as such before any schema reads it
 * (`failureLine` then says so in one line, instead of a tree of decoding failures).
 */
export const cliClient = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transformResponse(client, (answer) =>
    Effect.filterOrFail(
      answer,
      hasJsonOrNoBody,
      (response) => new HttpClientError.ResponseError({ request: response.request, response, reason: "Decode", description: "not JSON" })
    ))

/** A refusal of the service (its error body's status, message and field) with what to check when the call went astray. */
export const refusalLine = (
  refusal: { readonly status: number; readonly code: string; readonly message: string; readonly field?: string | undefined },
  credential: Credential
): string => {
  const line = `${refusal.status}: ${refusal.message}${refusal.field === undefined ? "" : ` (${refusal.field})`}`
  if (refusal.status === 401) return `${line} — ${checkCredential[credential]}`
  // "not_found" is a path with no endpoint (a missing workspace or key has its own code): the URL is wrong.
  if (refusal.status === 404 && refusal.code === "not_found") return `${line} — ${checkUrl}`
  return line
}

/**
 * Any failure of a call of the admin API as one line: the service's refusals as they are (with a hint for
 * 401 and a path with no endpoint), and answers that are not the admin API's (an unexpected status, JSON of
 * another shape) as "not the service", naming the URL to check.
 */
export const failureLine = (error: unknown, baseUrl: string, credential: Credential = "adminToken"): string | undefined => {
  if (error instanceof CliRequestFailed) return error.message
  if (
    typeof error === "object" && error !== null && "_tag" in error && (error._tag === "AdminError" || error._tag === "ExportError") &&
    "status" in error && typeof error.status === "number" && "code" in error && typeof error.code === "string" &&
    "message" in error && typeof error.message === "string"
  ) {
    const field = "field" in error && typeof error.field === "string" ? error.field : undefined
    return refusalLine({ status: error.status, code: error.code, message: error.message, field }, credential)
  }
  if (error instanceof HttpClientError.RequestError) return transportFailure(error).message
  if (error instanceof HttpClientError.ResponseError) {
    return hasJsonOrNoBody(error.response)
      ? `${error.request.method} ${error.request.url} answered ${error.response.status}, which the admin API does not answer: ${checkUrl}`
      : notTheService(error.response)
  }
  if (ParseResult.isParseError(error)) return `${baseUrl} answered JSON that is not the admin API's answer: ${checkUrl}`
  return undefined
}

/** The error body's fields, in the admin and export formats (`{ error: { code, message, field? } }`). */
const refusalOf = (status: number, answer: unknown) => {
  if (typeof answer === "object" && answer !== null && "error" in answer) {
    const error = answer.error
    if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
      const code = "code" in error && typeof error.code === "string" ? error.code : ""
      const field = "field" in error && typeof error.field === "string" ? error.field : undefined
      return { status, code, message: error.message, field }
    }
  }
  return undefined
}

/** POSTs a JSON text with a bearer token and returns the decoded JSON answer, or the failure as one line. */
export const postJson = (url: string, token: string, jsonText: string, credential: Credential = "adminToken") =>
  Effect.gen(function*() {
    const client = cliClient(yield* HttpClient.HttpClient)
    const request = HttpClientRequest.post(url).pipe(
      HttpClientRequest.bearerToken(token),
      HttpClientRequest.bodyText(jsonText, "application/json")
    )
    const response = yield* client.execute(request)
    const answer: unknown = yield* response.json
    if (response.status >= 400) {
      const refusal = refusalOf(response.status, answer)
      return yield* Effect.fail(
        new CliRequestFailed({
          message: refusal === undefined
            ? `POST ${url} answered ${response.status} with JSON that is not the service's error: ${checkUrl}`
            : refusalLine(refusal, credential)
        })
      )
    }
    return answer
  }).pipe(
    Effect.scoped,
    Effect.catchTags({
      RequestError: (error) => Effect.fail(transportFailure(error)),
      ResponseError: (error) => Effect.fail(new CliRequestFailed({ message: notTheService(error.response) }))
    })
  )
