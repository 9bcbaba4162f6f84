import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { AppConfig } from "../../src/config"
import { defaultWorkspaceSettings } from "../../src/domain/workspaceSettings"
import { ForwardingLane } from "../../src/http/forwardingLane"
import { AuthService } from "../../src/services/identity/AuthService"
import { ChatCompletions } from "../../src/services/endpoints/ChatCompletions"
import { Embeddings } from "../../src/services/endpoints/Embeddings"
import { Responses } from "../../src/services/endpoints/Responses"
import { FimCompletions } from "../../src/services/endpoints/FimCompletions"
import type { StreamSink } from "../../src/services/forwarding/Forwarder"
import { CountTokens } from "../../src/services/endpoints/CountTokens"
import { Messages } from "../../src/services/endpoints/Messages"
import { LargeBodies } from "../../src/services/forwarding/LargeBodies"
import { ModelCatalog } from "../../src/services/forwarding/ModelCatalog"
import { MODEL_CATALOG } from "../../src/domain/models"
import { EndpointForwarding } from "../../src/services/forwarding/EndpointForwarding"
import { RateLimits } from "../../src/services/limits/RateLimits"
import { Metrics } from "../../src/platform/Metrics"

const principal = {
  keyId: "00000000-0000-4000-8000-000000000001",
  scopes: ["COMPLETION_API" as const],
  workspace: { id: "00000000-0000-4000-8000-000000000002", name: "w", settings: defaultWorkspaceSettings, createdAt: new Date(0) }
}
const unused = { check: () => Effect.die("not called") }

/** The lane over stub services: chat completions die at once, or after a first stream event. */
const laneLayerWith = (env: Record<string, string>) => ForwardingLane.layer.pipe(
  Layer.provide(Layer.succeed(AuthService, { authenticate: () => Effect.succeed(principal) })),
  Layer.provide(Layer.succeed(EndpointForwarding, {
    serve: (endpoint) => (_principal, _region, request) =>
      endpoint.path !== "/v1/chat/completions"
        ? Effect.die("not called")
        : (request as { readonly stream?: boolean }).stream === true
        ? Effect.succeed({
          _tag: "Stream" as const,
          headers: {},
          relay: (sink: StreamSink) =>
            Effect.sync(() => sink.write("data: {}\n\n")).pipe(Effect.zipRight(Effect.sleep("20 millis")), Effect.zipRight(Effect.die("relay broke")))
        })
        : Effect.die("service broke")
  })),
  Layer.provide(Layer.succeed(ChatCompletions, unused)),
  Layer.provide(Layer.succeed(Embeddings, unused)),
  Layer.provide(Layer.succeed(Responses, unused)),
  Layer.provide(Layer.succeed(Messages, unused)),
  Layer.provide(Layer.succeed(CountTokens, unused)),
  Layer.provide(Layer.succeed(FimCompletions, unused)),
  Layer.provide(LargeBodies.layer),
  Layer.provide(ModelCatalog.fixed(MODEL_CATALOG)),
  Layer.provide(Metrics.none),
  Layer.provide(Layer.succeed(RateLimits, { admit: () => Effect.succeed({ readings: undefined, settle: () => Effect.void }) })),
  Layer.provide(AppConfig.layer),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATA_DIR", "/tmp/lane-unit"], ...Object.entries(env)]))))
)
const laneLayer = laneLayerWith({})

const withLaneServer = <A>(use: (url: string) => Promise<A>, layer = laneLayer) =>
  Effect.gen(function*() {
    const lane = yield* ForwardingLane
    const server = http.createServer((request, response) => {
      if (!lane.claim(request, response)) response.writeHead(418).end()
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () => Effect.sync(() => server.closeAllConnections()).pipe(Effect.zipRight(Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))))
    )
    return yield* Effect.promise(() => use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  }).pipe(Effect.scoped, Effect.provide(layer))

const post = (url: string, body: unknown) =>
  fetch(`${url}/provider_a/eu/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer any" },
    body: JSON.stringify(body)
  })

describe("the forwarding lane", () => {
  it.live("answers a service that dies with 500 in the endpoint's format", () =>
    withLaneServer(async (url) => {
      const answer = await post(url, { model: "chatgen-4o", messages: [{ role: "user", content: "x" }] })
      expect(answer.status).toBe(500)
      expect(answer.headers.get("x-request-id")).toMatch(/^req_/)
      expect(((await answer.json()) as { error: { type: string } }).error.type).toBe("server_error")
    }))

  it.live("cuts a stream whose relay dies after the first byte, so no client takes it for complete", () =>
    withLaneServer(async (url) => {
      const answer = await post(url, { model: "chatgen-4o", stream: true, messages: [{ role: "user", content: "x" }] })
      expect(answer.status).toBe(200)
      await expect(answer.text()).rejects.toThrow()
    }))

  it.live("leaves other methods, paths and content types alone", () =>
    withLaneServer(async (url) => {
      expect((await fetch(`${url}/provider_a/eu/v1/chat/completions`)).status).toBe(418)
      expect((await fetch(`${url}/provider_a/eu/v1/completions`, { method: "POST", body: "{}" })).status).toBe(418)
      const text = await fetch(`${url}/provider_a/eu/v1/chat/completions`, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" })
      expect(text.status).toBe(418)
    }))

  it.live("writes the client address in its access line: the peer's, or the one its trusted proxy names", () => {
    const lines: Array<string> = []
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      lines.push(String(chunk))
      return true
    })
    const addressesLogged = (layer: typeof laneLayer) =>
      withLaneServer(async (url) => {
        lines.length = 0
        await fetch(`${url}/provider_a/eu/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer any", "x-forwarded-for": "6.6.6.6, 203.0.113.9" },
          body: JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "x" }] })
        })
        // The line is written once the serving fiber has ended, just after the answer.
        for (let i = 0; i < 100 && !lines.some((line) => line.includes("\"message\":\"request\"")); i++) await new Promise((r) => setTimeout(r, 10))
        return lines.filter((line) => line.includes("\"message\":\"request\"")).map((line) => JSON.parse(line).annotations.address)
      }, layer)
    return Effect.gen(function*() {
      expect(yield* addressesLogged(laneLayer)).toEqual(["127.0.0.1"])
      expect(yield* addressesLogged(laneLayerWith({ TRUSTED_PROXIES: "127.0.0.1" }))).toEqual(["203.0.113.9"])
    }).pipe(Effect.ensuring(Effect.sync(() => spy.mockRestore())))
  })
})
