import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Stream } from "effect"
import { type Forwarded, ForwardFailure, type StreamBroken } from "../services/Forwarder"
import { type ErrorFormat, type FormatErrors, problemAs } from "./errorFormat"

/**
 * After the first byte a failure cannot change the status: the in-band error event is written, and
 * then the connection is destroyed rather than ended, so that no client takes the cut stream for a
 * complete one (a clean end of a chunked body would look like success).
 */
const cutAfter = (broken: StreamBroken) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.async<void>((resume) => {
      const response = NodeHttpServerRequest.toServerResponse(request)
      response.write(broken.inBandError, () => {
        response.destroy()
        resume(Effect.void)
      })
    }))

const streamHeaders = { "cache-control": "no-cache", "x-accel-buffering": "no" }

/** Answers with what was forwarded, or with the endpoint's own error (and the upstream's retry hints). */
export const respond = <F extends ErrorFormat>(
  format: F,
  forwarded: Effect.Effect<Forwarded, ForwardFailure>
): Effect.Effect<HttpServerResponse.HttpServerResponse, FormatErrors[F], HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    forwarded.pipe(
      Effect.map((answer) =>
        answer._tag === "Json"
          ? HttpServerResponse.uint8Array(answer.body, { contentType: "application/json", headers: answer.headers })
          : HttpServerResponse.stream(
            answer.events.pipe(
              Stream.catchAll((broken) => Stream.execute(cutAfter(broken))),
              Stream.provideService(HttpServerRequest.HttpServerRequest, request)
            ),
            { contentType: "text/event-stream", headers: { ...streamHeaders, ...answer.headers } }
          )
      ),
      Effect.catchTag("ForwardFailure", ({ headers, problem }) =>
        Effect.zipRight(
          Object.keys(headers).length === 0
            ? Effect.void
            : HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers))),
          Effect.fail(problemAs(format, problem))
        ))
    ))
