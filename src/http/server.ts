import { FileSystem, HttpApiBuilder, HttpApiSwagger, HttpIncomingMessage, HttpMiddleware, HttpRouter, HttpServer, HttpServerRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Duration, Effect, Layer, Option } from "effect"
import * as http from "node:http"
import { WorkspaceApi } from "../api/Api"
import { AppConfig } from "../config"
import { errorFormatOf, problemAs } from "./errorFormat"
import { failureToProblem, isJsonOrUndeclared, tooLarge, unsupportedMediaType } from "./failureToProblem"
import { trackConnections } from "./connectionDrain"
import { loadConsoleAssets, serveConsole } from "./consoleWeb"
import { ForwardingLane } from "./forwardingLane"
import { requestContext } from "./requestContext"

const bodyMethods: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH"])

/**
 * Failures the framework raises before a handler runs are rendered in the format of the route
 * family that was called, so every client library can parse them.
 */
const FrameworkErrorsLive = HttpApiBuilder.middleware(
  WorkspaceApi,
  Effect.map(AppConfig, (config) => (app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const declared = Number(request.headers["content-length"])
      const format = errorFormatOf(request.url)
      if (declared > config.maxBodyBytes) return yield* Effect.fail(problemAs(format, tooLarge(config.maxBodyBytes)))
      // Every body of this API is JSON: another declared type (a form, multipart) is refused before any parser runs.
      const contentType = request.headers["content-type"]
      if (bodyMethods.has(request.method) && !isJsonOrUndeclared(contentType)) {
        return yield* Effect.fail(problemAs(format, unsupportedMediaType(contentType ?? "")))
      }
      return yield* app.pipe(
        Effect.provideService(HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(config.maxBodyBytes))),
        Effect.catchAllCause((cause) =>
          Option.match(failureToProblem(cause, config.maxBodyBytes), {
            onNone: () => Effect.failCause(cause),
            onSome: (problem) => Effect.fail(problemAs(format, problem))
          })
        )
      )
    })
  )
)

const DocsLive = Layer.mergeAll(
  HttpApiSwagger.layer({ path: "/docs" }),
  HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })
)

/** How long shutdown waits for in-flight requests (long streams included) before closing their sockets. */
const shutdownGrace = Duration.seconds(20)

/**
 * Serves the API under BASE_PATH. Needs the API layer (groups with their handlers). On shutdown the
 * server stops accepting, lets in-flight requests finish (up to the grace period), then the layers
 * below it (database pool, embedded PostgreSQL) are released.
 */
export const HttpServerLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const lane = yield* ForwardingLane
    const nodeServer = http.createServer({ keepAliveTimeout: 65_000 })
    const connections = trackConnections(nodeServer)
    // Every request is counted for the shutdown drain, then offered to the forwarding lane; the
    // HttpApi app (whose listener the platform adds) sees only those the lane leaves.
    const emit = nodeServer.emit.bind(nodeServer)
    nodeServer.emit = ((event: string, ...args: Array<unknown>): boolean => {
      if (event !== "request") return emit(event, ...args)
      const [request, response] = args as [http.IncomingMessage, http.ServerResponse]
      connections.track(request, response)
      return lane.claim(request, response) || emit(event, ...args)
    }) as typeof nodeServer.emit
    const serve = Effect.gen(function*() {
      const api = yield* HttpApiBuilder.httpApp
      // The web console's pages and files sit beside the API under BASE_PATH (/console/, not /console/api/).
      const app = serveConsole(yield* loadConsoleAssets, config.basePath)(api)
      const mounted = config.basePath === "" ? app : HttpRouter.empty.pipe(HttpRouter.mountApp(config.basePath, app))
      // Applied to the app, not passed to serve: serve's middleware runs after the response is written.
      return HttpServer.serve(requestContext(HttpMiddleware.xForwardedHeaders(mounted)))
    }).pipe(
      Layer.unwrapEffect,
      // No tracer is exported: the per-request server span was pure cost (about 0.04 ms of CPU a request).
      HttpMiddleware.withTracerDisabledWhen(() => true)
    )
    // Released before the server itself: idle connections go now, busy ones when done or after the grace.
    const drainOnShutdown = Layer.scopedDiscard(
      Effect.addFinalizer(() =>
        Effect.sync(() => {
          connections.drain()
          setTimeout(connections.closeAll, Duration.toMillis(shutdownGrace)).unref()
        })
      )
    )
    const announce = Layer.effectDiscard(
      Effect.logInfo("listening").pipe(
        Effect.annotateLogs({ url: `http://${config.host}:${config.port}${config.basePath}`, publicUrl: config.publicUrl })
      )
    )
    return Layer.mergeAll(serve, drainOnShutdown, announce).pipe(
      Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer, DocsLive, FrameworkErrorsLive]),
      Layer.provide(NodeHttpServer.layer(() => nodeServer, { port: config.port, host: config.host }))
    )
  })
)
