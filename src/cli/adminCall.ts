import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Data, Effect } from "effect"

/** A call of the service that failed: its HTTP status (0 when unreachable) and message. */
export class CliRequestFailed extends Data.TaggedError("CliRequestFailed")<{
  readonly status: number
  readonly message: string
}> {}

/** POSTs a JSON text with a bearer token and returns the decoded JSON answer, or the failure. */
export const postJson = (url: string, token: string, jsonText: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const request = HttpClientRequest.post(url).pipe(
      HttpClientRequest.bearerToken(token),
      HttpClientRequest.bodyText(jsonText, "application/json")
    )
    const response = yield* client.execute(request)
    const answer: unknown = yield* response.json
    if (response.status >= 400) {
      return yield* Effect.fail(new CliRequestFailed({ status: response.status, message: errorMessage(answer) }))
    }
    return answer
  }).pipe(
    Effect.scoped,
    Effect.catchTags({
      RequestError: (error) => Effect.fail(new CliRequestFailed({ status: 0, message: `cannot reach ${url}: ${error.message}` })),
      ResponseError: (error) => Effect.fail(new CliRequestFailed({ status: error.response.status, message: error.message }))
    })
  )

const errorMessage = (answer: unknown): string => {
  if (typeof answer === "object" && answer !== null && "error" in answer) {
    const error = answer.error
    if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
      return "field" in error && typeof error.field === "string" ? `${error.message} (${error.field})` : error.message
    }
  }
  return JSON.stringify(answer)
}
