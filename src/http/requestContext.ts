import { HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { currentRequestId } from "./currentRequestId"

const acceptableId = /^[A-Za-z0-9._:-]{8,128}$/

/**
 * Gives every request an id (the caller's `x-request-id` when it is sane), echoes it in the
 * response headers the client libraries read (`x-request-id`, `request-id`), and writes one
 * structured log line per request.
 */
export const requestContext = HttpMiddleware.make((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const incoming = request.headers["x-request-id"]
    const requestId = incoming !== undefined && acceptableId.test(incoming) ? incoming : `req_${crypto.randomUUID().replaceAll("-", "")}`
    const started = performance.now()
    const response = yield* app.pipe(
      Effect.annotateLogs({ requestId }),
      Effect.locally(currentRequestId, requestId),
      Effect.onExit((exit) =>
        Effect.logInfo("request").pipe(
          Effect.annotateLogs({
            requestId,
            method: request.method,
            path: request.url.split("?")[0],
            status: exit._tag === "Success" ? exit.value.status : 500,
            durationMs: Math.round((performance.now() - started) * 10) / 10
          })
        )
      )
    )
    return HttpServerResponse.setHeaders(response, { "x-request-id": requestId, "request-id": requestId })
  })
)
