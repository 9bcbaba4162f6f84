// The simulated cloud's token endpoint (`POST /token`) and the service-account file its tests are given
// (`GET /vertex/service-account.json`), both addressed by the host the request came to, so that they work
// in-process and when the gateway runs as a separate process.
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either } from "effect"
import { VertexAuthority } from "./authority"

/** The simulator's base URL as the caller addressed it. */
const baseUrlOf = (request: HttpServerRequest.HttpServerRequest) => `http://${request.headers["host"] ?? "127.0.0.1"}`

export const serveToken = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const authority = yield* VertexAuthority
  const form = yield* Effect.either(request.text)
  const answer = yield* Effect.either(authority.exchange(Either.getOrElse(form, () => ""), `${baseUrlOf(request)}/token`))
  return Either.isRight(answer)
    ? HttpServerResponse.unsafeJson(answer.right, { headers: { "cache-control": "no-store" } })
    : HttpServerResponse.unsafeJson({ error: answer.left.error, error_description: answer.left.error_description }, { status: 400 })
})

export const serveServiceAccountFile = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const authority = yield* VertexAuthority
  return HttpServerResponse.unsafeJson(yield* authority.serviceAccountFile(baseUrlOf(request)))
})
