import { FileSystem, HttpApi, HttpApiBuilder, HttpIncomingMessage, HttpMiddleware, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import * as http from "node:http"
import { WorkspaceApi } from "../api/Api"
import { AppConfig } from "../config"
import { type ErrorFormat, errorFormatOf, problemAs } from "../api/errors/errorFormat"
import { nestedTooDeep } from "../api/requestProblems"
import { maxJsonDepth, textNestsDeeper, tooDeepPath } from "../domain/jsonDepth"
import { largeBodyBytes } from "../domain/requestBounds"
import { parseJson } from "../providers/protocol"
import { failureToProblem, isJsonOrUndeclared, tooLarge, unsupportedMediaType } from "../api/requestProblems"
import { trackConnections } from "./connectionDrain"
import { limitConnections } from "./connectionLimits"
import { loadConsoleAssets, serveConsole } from "./consoleWeb"
import { ForwardingLane } from "./forwardingLane"
import { setSecurityHeaders } from "./securityHeaders"
import { type AccessLog, accessLogFor } from "./accessLog"
import { Metrics } from "../platform/Metrics"
import { requestFamily } from "./requestFamily"
import { requestContext } from "./requestContext"
import { clientAddressOf, withClientAddress } from "./clientAddress"
import { isUnderBasePath, mountAtBasePath } from "./basePath"
import { answerClientErrors } from "./clientErrors"
import { docsPath, withDocsPolicy } from "./docsPage"

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
      return yield* Effect.zipRight(bodyDepthChecked(request, format), app).pipe(
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

/**
 * The JSON bodies of the admin API, the console's API and the exports, refused with the field named when they
 * nest deeper than maxJsonDepth, before the framework decodes them (JSON.stringify of a stored setting, a
 * schema's recursion: 5,000 levels overflowed the stack). Read once: the framework caches the body's text. Only
 * bodies declared at most largeBodyBytes long are read here, before the caller is authenticated (those of this
 * API are a few KB; an event batch may be more): a larger or chunked one nested too deep is still 400, from the
 * stack overflow (failureToProblem), without the field. The forwarded endpoints read their bodies themselves and
 * check them there (withForwardedBody).
 */
const bodyDepthChecked = (request: HttpServerRequest.HttpServerRequest, format: ErrorFormat) => {
  if (!bodyMethods.has(request.method) || (format !== "admin" && format !== "export")) return Effect.void
  if (!(Number(request.headers["content-length"]) <= largeBodyBytes)) return Effect.void
  // A body that cannot be read (cut short) is answered below as the framework's own failure would be.
  return Effect.flatMap(Effect.orDie(request.text), (text) => {
    if (!textNestsDeeper(text, maxJsonDepth)) return Effect.void
    const field = tooDeepPath(parseJson(text), maxJsonDepth) ?? "body"
    return Effect.fail(problemAs(format, nestedTooDeep(field)))
  })
}

/**
 * A chunked body over MAX_BODY_BYTES is refused mid-read, and the framework then destroys the
 * request, which resets the socket: the client, still sending, sees a reset rather than the 413.
 * For such requests (no declared length) destroying an unfinished body instead discards the rest
 * of it (read and dropped, nothing kept), so the 413 is read; a body that goes on past 64 MiB or
 * four times the limit (or 30 s) is cut then.
 */
const answerBeforeReset = (request: http.IncomingMessage, maxBodyBytes: number) => {
  const discardAtMost = Math.max(64 * 1024 * 1024, 4 * maxBodyBytes)
  const destroy = request.destroy.bind(request)
  request.destroy = ((error?: Error) => {
    if (request.complete || request.destroyed) return destroy(error)
    let discarded = 0
    const cut = setTimeout(() => destroy(error), 30_000)
    request.on("data", (chunk: Buffer) => {
      discarded += chunk.length
      if (discarded > discardAtMost) destroy(error)
    })
    request.once("end", () => clearTimeout(cut))
    request.once("close", () => clearTimeout(cut))
    request.resume()
    return request
  }) as typeof request.destroy
}

/**
 * GET /docs, the Swagger UI page of the API, made on its first request (src/http/swaggerPage.ts, a chunk of its
 * own): an idle service does not hold its megabytes of script; its policy is added by withDocsPolicy
 * (src/http/docsPage.ts). GET /openapi.json, the document itself, also made on its first request (the platform's
 * middlewareOpenApi builds it, and its JSON, at start-up): a service that only forwards never holds it.
 */
const DocsLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const api = yield* HttpApi.Api
    const page = yield* Effect.cached(Effect.flatMap(Effect.promise(() => import("./swaggerPage")), ({ swaggerHandler }) => swaggerHandler(api)))
    const document = yield* Effect.cached(Effect.suspend(() => Effect.orDie(HttpServerResponse.json(OpenApi.fromApi(api.api)))))
    yield* router.get(docsPath, Effect.flatten(page))
    yield* router.get("/openapi.json", Effect.flatten(document))
  })
)

/** The Node server, the forwarding lane in front of the HttpApi app, and the shutdown drain. */
const servedApp = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const lane = yield* ForwardingLane
    const secretPaths = new RegExp(`^${config.basePath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/(admin|export)(/|\\?|$)`)
    const limits = config.serverLimits
    const api = yield* HttpApiBuilder.httpApp
    // The web console's pages and files sit beside the API under BASE_PATH (/console/, not /console/api/).
    const app = serveConsole(yield* loadConsoleAssets, config.basePath)(withDocsPolicy(api))
    const mounted = mountAtBasePath(config.basePath, app)
    // The platform's own Node handler for the HttpApi app (the one its server would add as listener).
    // Its access lines are written by the same access log as the forwarding lane's.
    const written = accessLogFor(yield* Effect.runtime<never>(), config.logFormat)
    // Every request the HttpApi app answers is counted where its log line is written.
    const metrics = yield* Metrics
    const accessLog: AccessLog = metrics.enabled
      ? (entry) => {
        metrics.request(isUnderBasePath(config.basePath, entry.path) ? requestFamily(entry.path.slice(config.basePath.length)) : "other", entry.status)
        written(entry)
      }
      : written
    // The client address (TRUSTED_PROXIES) is set first, so the access line and every handler read the same one.
    const handler = yield* NodeHttpServer.makeHandler(withClientAddress(clientAddressOf(config))(requestContext(accessLog)(mounted)))
    // Slow or idle sockets cost a slot each: headers, whole requests and idle keep-alive are timed,
    // and connections beyond the maximum are refused at accept (each is a file descriptor).
    const nodeServer = http.createServer({
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks those two timeouts on this period: the default (30 s) would let a slow-header
      // socket live up to 30 s past its timeout.
      connectionsCheckingInterval: Math.max(250, Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs, 5_000) / 2)
    }, (request, response) => {
      // Every request is counted for the shutdown drain, then offered to the forwarding lane; the
      // HttpApi app sees only those the lane leaves. The lane writes the security headers in its one
      // writeHead: set on the response first, they would turn each of its headers into a setHeader call.
      connections.track(request, response)
      if (request.headers["content-length"] === undefined && bodyMethods.has(request.method ?? "")) {
        answerBeforeReset(request, config.maxBodyBytes)
      }
      if (lane.claim(request, response)) return
      setSecurityHeaders(request, response, secretPaths)
      handler(request, response)
    })
    nodeServer.maxConnections = limits.maxConnections
    // A request line or headers over Node's limit: 431, read by the client rather than reset.
    answerClientErrors(nodeServer)
    const connections = trackConnections(nodeServer)
    limitConnections(nodeServer, {
      perAddress: limits.maxConnectionsPerAddress,
      firstByteMs: limits.firstByteTimeoutMs,
      unlimited: Option.match(config.trustedProxies, { onNone: () => () => false, onSome: (proxies) => proxies.includes })
    })
    // Released before the server itself: idle connections go now, busy ones when done or after the grace.
    const drainOnShutdown = Layer.scopedDiscard(
      Effect.addFinalizer(() =>
        Effect.sync(() => {
          connections.drain()
          // How long shutdown waits for in-flight requests (long streams included) before closing their sockets.
          setTimeout(connections.closeAll, limits.shutdownGraceMs).unref()
        })
      )
    )
    const announce = Layer.effectDiscard(
      Effect.logInfo("listening").pipe(
        Effect.annotateLogs({ url: `http://${config.host}:${config.port}${config.basePath}`, publicUrl: config.publicUrl })
      )
    )
    // The platform's server listens (and closes); the request listener is the one given above. Its queue of
    // connections not yet accepted is as long as the connections allowed, Node's 511 at least (the kernel caps it at
    // somaxconn): with 511, a burst of new clients while the loop is busy overflowed it, and each connection dropped
    // there waited a SYN retransmission (1 s, then 3 s) before the service ever saw it (bench:streams at 1,024).
    // Connections beyond the maximum are accepted and closed at once, not left to wait in a short queue.
    return Layer.mergeAll(drainOnShutdown, announce).pipe(
      Layer.provide(NodeHttpServer.layer(() => nodeServer, { port: config.port, host: config.host, backlog: Math.max(511, limits.maxConnections) }))
    )
  })
).pipe(
  Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer, DocsLive, FrameworkErrorsLive, NodeHttpServer.layerContext])
)

/** Probes and scrapes come every few seconds: a trace each would bury the requests worth reading. */
const probePaths = (basePath: string): ReadonlySet<string> => new Set(["/healthz", "/readyz", "/metrics"].map((path) => `${basePath}${path}`))

/**
 * Serves the API under BASE_PATH. Needs the API layer (groups with their handlers). On shutdown the
 * server stops accepting, lets in-flight requests finish (up to the grace period), then the layers
 * below it (database pool, embedded PostgreSQL) are released. The framework's per-request server span
 * (which continues a caller's traceparent) is made only when traces are exported: otherwise it is pure
 * cost (about 0.04 ms of CPU a request). Set while the handler is made, whose runtime keeps it.
 */
export const HttpServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, ({ basePath, tracing }) => {
    if (Option.isNone(tracing)) return servedApp.pipe(HttpMiddleware.withTracerDisabledWhen(() => true))
    const probes = probePaths(basePath)
    return servedApp.pipe(HttpMiddleware.withTracerDisabledWhen((request) => probes.has(request.url.split("?")[0] ?? "")))
  })
)
