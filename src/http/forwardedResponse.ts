import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, FiberRef } from "effect"
import type * as http from "node:http"
import type { Refusal } from "../domain/refusals"
import type { Provider } from "../providers/provider"
import { renderRefusal } from "../providers/render"
import type { Forwarded, StreamSink } from "../services/Forwarder"
import { currentRequestId } from "./currentRequestId"
import { type FormatErrors, problemAs } from "./errorFormat"
import { requestIdHeaders } from "./requestContext"

const streamHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" }

/** The client's connection as a stream sink. */
const sinkOf = (response: http.ServerResponse): StreamSink => ({
  write: (text) => response.write(text),
  onDrain: (resume) => void response.once("drain", resume),
  end: () => void response.end(),
  cut: (inBandError, afterCut) =>
    void response.write(inBandError, () => {
      response.destroy()
      // Marks the response ended, so the server does not try to answer it again.
      response.end()
      afterCut()
    })
})

/** Writes a relayed stream to the connection: status and headers, then the events as they come. */
export const writeStream = (
  response: http.ServerResponse,
  answer: Extract<Forwarded, { _tag: "Stream" }>,
  headers: Readonly<Record<string, string>>
): Effect.Effect<void> => {
  response.writeHead(200, { ...streamHeaders, ...answer.headers, ...headers })
  return answer.relay(sinkOf(response))
}

/**
 * A stream is written straight to the connection (the server's own stream bodies cost more CPU
 * than the rest of the request); the server then finds the response ended and leaves it. The
 * request id headers are set here, as the request-context middleware would on other answers.
 */
const relayed = (request: HttpServerRequest.HttpServerRequest, answer: Extract<Forwarded, { _tag: "Stream" }>) =>
  Effect.flatMap(FiberRef.get(currentRequestId), (requestId) =>
    writeStream(
      NodeHttpServerRequest.toServerResponse(request),
      answer,
      requestId === undefined ? {} : requestIdHeaders(requestId)
    ).pipe(Effect.as(HttpServerResponse.empty({ status: 200 }))))

/** Answers with what was forwarded, or with the refusal as the provider renders it (its headers on the answer). */
export const respond = <P extends Provider>(
  provider: P,
  forwarded: Effect.Effect<Forwarded, Refusal>
): Effect.Effect<HttpServerResponse.HttpServerResponse, FormatErrors[P["id"]], HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    forwarded.pipe(
      Effect.flatMap((answer) =>
        answer._tag === "Json"
          ? Effect.succeed(HttpServerResponse.uint8Array(answer.body, { contentType: "application/json", headers: answer.headers }))
          : relayed(request, answer)
      ),
      Effect.catchAll((refusal) => {
        const { headers, problem } = renderRefusal(provider, refusal)
        return Effect.zipRight(
          Object.keys(headers).length === 0
            ? Effect.void
            : HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers))),
          Effect.fail(problemAs<P["id"]>(provider.id, problem))
        )
      })
    ))
