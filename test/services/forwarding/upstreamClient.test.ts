import { ConfigProvider, Effect, Exit, Layer, Redacted } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AppConfig } from "../../../src/config"
import { providerA } from "../../../src/providers/providerA/dialect"
import { discard, UpstreamClient, type UpstreamResponse } from "../../../src/services/forwarding/UpstreamClient"

/**
 * Upstream bodies whose reader comes late, or never: a body cut before anyone listens, or discarded
 * unread, is a failure of that exchange only. An 'error' event without a listener would end the process
 * (vitest fails the run on it).
 */
let server: http.Server
let url = ""

beforeAll(async () => {
  server = http.createServer((request, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" })
    response.flushHeaders()
    if (request.url === "/v1/cut") return void setTimeout(() => response.socket?.destroy(), 20)
    response.end("data: {}\n\n")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const config = AppConfig.layer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map()))))

const withClient = <A, E>(use: (client: UpstreamClient["Type"]) => Effect.Effect<A, E>) =>
  Effect.runPromiseExit(Effect.scoped(Effect.flatMap(UpstreamClient, use).pipe(Effect.provide(UpstreamClient.layer.pipe(Layer.provide(config))))))

const send = (client: UpstreamClient["Type"], path: string): Effect.Effect<UpstreamResponse, unknown> =>
  client.send({ url: `${url}${path}`, method: "POST", headers: providerA.upstreamAuth(Redacted.make("k")), body: "{}" })

describe("UpstreamClient bodies", () => {
  it("fails the reader of a body that was cut before it listened, at once", async () => {
    const exit = await withClient((client) =>
      Effect.gen(function*() {
        const response = yield* send(client, "/v1/cut")
        // The connection is cut while nobody reads the body.
        yield* Effect.sleep("200 millis")
        return yield* client.readAnswer(response.body)
      })
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(JSON.stringify(exit)).toMatch(/UpstreamFailure/)
  })

  it("discards an unread body without an unhandled error, even when it came whole", async () => {
    const exit = await withClient((client) =>
      Effect.gen(function*() {
        const response = yield* send(client, "/v1/whole")
        // The whole answer arrived: the exchange is over, and undici destroys the unread body with an abort error.
        yield* Effect.sleep("100 millis")
        discard(response.body)
        // undici emits its abort error on a later tick: give it the time to.
        yield* Effect.sleep("100 millis")
        return response.body.destroyed
      })
    )
    expect(exit).toEqual(Exit.succeed(true))
  })
})
