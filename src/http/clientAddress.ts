import { HttpMiddleware, HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option } from "effect"
import type * as http from "node:http"
import type { AppConfigShape } from "../config"
import { resolveClientAddress } from "../domain/clientAddress"

/** The client address of a Node request (src/domain/clientAddress.ts says which), undefined once its socket is gone. */
export type ClientAddressOf = (request: http.IncomingMessage) => string | undefined

/** The one rule every part of the server uses: the forwarding lane, the HttpApi app, their access log. */
export const clientAddressOf = (config: Pick<AppConfigShape, "trustedProxies">): ClientAddressOf => {
  const trusted = Option.getOrUndefined(config.trustedProxies)
  return (request) => {
    // Node joins repeated lines of this header with commas; the array form is only in its types.
    const forwarded = request.headers["x-forwarded-for"]
    return resolveClientAddress(request.socket.remoteAddress, Array.isArray(forwarded) ? forwarded.join(",") : forwarded, trusted)
  }
}

/**
 * For the HttpApi app: the request's `remoteAddress` becomes its client address, so that handlers (the
 * audit log, the throttles) and the access line read that one. Replaces the platform's
 * `xForwardedHeaders`, which believes the first forwarded entry of anyone.
 */
export const withClientAddress = (addressOf: ClientAddressOf) =>
  HttpMiddleware.make((app) =>
    Effect.updateService(app, HttpServerRequest.HttpServerRequest, (request) => {
      const incoming = NodeHttpServerRequest.toIncomingMessage(request)
      const address = addressOf(incoming)
      return address === undefined || address === incoming.socket.remoteAddress ? request : request.modify({ remoteAddress: address })
    })
  )
