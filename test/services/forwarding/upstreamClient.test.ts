import { ConfigProvider, Effect, Exit, Layer, Redacted, Schedule } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AppConfig } from "../../../src/config"
import { providerA } from "../../../src/providers/providerA/dialect"
import { discard, unreadable, UpstreamClient, type UpstreamResponse } from "../../../src/services/forwarding/UpstreamClient"

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

/** Polls a condition of the body's state (a listener would change what is tested), every few milliseconds for at most 10 s. */
const until = (holds: () => boolean) =>
  Effect.suspend(() => (holds() ? Effect.void : Effect.fail("not yet" as const))).pipe(
    Effect.retry({ schedule: Schedule.spaced("5 millis"), times: 2_000 }),
    Effect.orDie
  )

const send = (client: UpstreamClient["Type"], path: string): Effect.Effect<UpstreamResponse, unknown> =>
  client.send({ url: `${url}${path}`, method: "POST", headers: providerA.upstreamAuth(Redacted.make("k")), body: "{}" })

describe("UpstreamClient bodies", () => {
  it("fails the reader of a body that was cut before it listened, at once", async () => {
    const exit = await withClient((client) =>
      Effect.gen(function*() {
        const response = yield* send(client, "/v1/cut")
        // The connection is cut while nobody reads the body: read once the body knows it.
        yield* until(() => unreadable(response.body) !== undefined)
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
        yield* until(() => response.body.readableLength > 0)
        discard(response.body)
        // undici emits its abort error on a later tick: give it the time to.
        yield* Effect.sleep("100 millis")
        return response.body.destroyed
      })
    )
    expect(exit).toEqual(Exit.succeed(true))
  })
})
