import { HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Exit, FiberId, Option } from "effect"
import * as crypto from "node:crypto"
import { currentRequestId, requestIdHeaders } from "../handlers/requestId"
import type { AccessLog } from "./accessLog"

export { requestIdHeaders } from "../handlers/requestId"

/** Invitation and password-reset tokens travel in the path: the log keeps the path without them. */
export const loggablePath = (url: string): string =>
  (url.split("?")[0] ?? "").replace(/(\/console(?:\/api)?\/(?:invitations|password-resets)\/)[^/]+/, "$1…")

const acceptableId = /^[A-Za-z0-9._:-]{8,128}$/

// Random bytes drawn 256 ids at a time, as crypto.randomUUID does; the id is written as text in one buffer.
const idsPerDraw = 256
const random = Buffer.allocUnsafeSlow(16 * idsPerDraw)
let drawn = idsPerDraw
const idText = Buffer.from("req_00000000000000000000000000000000", "latin1")
const hexDigits = Buffer.from("0123456789abcdef", "latin1")

/**
 * `req_` and a version 4 UUID without its dashes, as `req_${crypto.randomUUID().replaceAll("-", "")}` made it: one
 * string, where that made three (randomUUID's, built of 20 pieces, the copy without dashes and the prefixed one).
 */
export const freshRequestId = (): string => {
  if (drawn === idsPerDraw) {
    crypto.randomFillSync(random)
    drawn = 0
  }
  const at = 16 * drawn++
  random[at + 6] = (random[at + 6]! & 0x0f) | 0x40 // version 4
  random[at + 8] = (random[at + 8]! & 0x3f) | 0x80 // the RFC 4122 variant
  for (let i = 0; i < 16; i++) {
    const byte = random[at + i]!
    idText[4 + 2 * i] = hexDigits[byte >> 4]!
    idText[5 + 2 * i] = hexDigits[byte & 15]!
  }
  return idText.toString("latin1")
}

/** The caller's `x-request-id` when it is sane, else a fresh one. */
export const requestIdFor = (incoming: string | undefined): string =>
  incoming !== undefined && acceptableId.test(incoming) ? incoming : freshRequestId()

/**
 * Runs the serving of one request with its id in the logs and in `currentRequestId`, and writes its
 * access line when it is done (status 500 when it failed unanswered, 499 when the client left), through
 * the same access log as the forwarding lane.
 */
export const withRequestContext = <A, E, R>(
  serve: Effect.Effect<A, E, R>,
  request: { readonly requestId: string; readonly method: string; readonly url: string; readonly address: string },
  statusOf: (answer: A) => number,
  accessLog: AccessLog
): Effect.Effect<A, E, R> => {
  const started = performance.now()
  return serve.pipe(
    Effect.annotateLogs({ requestId: request.requestId }),
    Effect.locally(currentRequestId, request.requestId),
    Effect.onExit((exit) =>
      Effect.fiberIdWith((fiberId) =>
        Effect.sync(() =>
          accessLog({
            requestId: request.requestId,
            method: request.method,
            path: loggablePath(request.url),
            status: Exit.isSuccess(exit) ? statusOf(exit.value) : Exit.isInterrupted(exit) ? 499 : 500,
            durationMs: Math.round((performance.now() - started) * 10) / 10,
            address: request.address,
            fiberId: FiberId.threadName(fiberId)
          })
        )
      )
    )
  )
}

/**
 * Gives every request an id, echoes it in the response headers and logs one line per request, with the
 * client address `withClientAddress` (src/http/clientAddress.ts) set on it.
 */
export const requestContext = (accessLog: AccessLog) =>
  HttpMiddleware.make((app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const requestId = requestIdFor(request.headers["x-request-id"])
      const address = Option.getOrElse(request.remoteAddress, () => "unknown")
      return withRequestContext(app, { requestId, method: request.method, url: request.url, address }, (response) => response.status, accessLog).pipe(
        Effect.map((response) => HttpServerResponse.setHeaders(response, requestIdHeaders(requestId)))
      )
    })
  )
