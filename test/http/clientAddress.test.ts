import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { parseTrustedProxies } from "../../src/domain/clientAddress"
import type { AccessEntry } from "../../src/http/accessLog"
import { clientAddressOf, withClientAddress } from "../../src/http/clientAddress"
import { requestContext } from "../../src/http/requestContext"

/** The server's HttpApi side as src/http/server.ts composes it, over an app that answers the address it sees. */
const serve = (trustedProxies: string) =>
  Effect.gen(function*() {
    const entries: Array<AccessEntry> = []
    const app = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
      HttpServerResponse.text(Option.getOrElse(request.remoteAddress, () => "none")))
    const config = { trustedProxies: Option.fromNullable(Either.getOrThrow(parseTrustedProxies(trustedProxies))) }
    const handler = yield* NodeHttpServer.makeHandler(withClientAddress(clientAddressOf(config))(requestContext((entry) => void entries.push(entry))(app)))
    const server = http.createServer(handler)
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
    )
    const ask = (forwardedFor?: string) =>
      Effect.promise(async () => {
        const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {
          headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor }
        })
        const seen = await answer.text()
        return { seen, logged: entries.at(-1)?.address }
      })
    return ask
  })

describe("the client address of the HttpApi app", () => {
  it.scoped("is the peer's for handlers and the access line, whatever X-Forwarded-For says, without TRUSTED_PROXIES", () =>
    Effect.gen(function*() {
      const ask = yield* serve("")
      expect(yield* ask()).toEqual({ seen: "127.0.0.1", logged: "127.0.0.1" })
      expect(yield* ask("6.6.6.6")).toEqual({ seen: "127.0.0.1", logged: "127.0.0.1" })
    }))

  it.scoped("is the right-most entry not a trusted proxy when the peer is one", () =>
    Effect.gen(function*() {
      const ask = yield* serve("127.0.0.0/8, 10.0.0.1")
      expect(yield* ask("6.6.6.6, 203.0.113.9, 10.0.0.1")).toEqual({ seen: "203.0.113.9", logged: "203.0.113.9" })
      expect(yield* ask()).toEqual({ seen: "127.0.0.1", logged: "127.0.0.1" })
    }))
})
