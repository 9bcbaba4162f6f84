import { Cause, Context, Effect, Either, Fiber, FiberId, Layer, Option, Runtime, Tracer } from "effect"
import type * as http from "node:http"
import { type Problem, wireError } from "../api/errors/errorFormat"
import { isJsonOrUndeclared, tooLarge } from "../api/requestProblems"
import { AppConfig } from "../config"
import { InvalidRequest } from "../domain/refusals"
import type { LimitFamily } from "../domain/workspaceSettings"
import { forwardedServices, type ServeRequest, writeStream } from "../handlers/forwarded"
import { flatMapNow } from "../services/forwarding/decidedNow"
import type { Provider } from "../providers/provider"
import { renderRefusal } from "../providers/render"
import { AuthService } from "../services/identity/AuthService"
import { accessLogFor, endStatus, fiberName } from "./accessLog"
import { checkKey } from "./authMiddleware"
import { clientAddressOf } from "./clientAddress"
import { Metrics } from "../platform/Metrics"
import { spansWhen } from "../platform/traceSpans"
import { parseTraceparent } from "../domain/traceContext"
import { requestIdFor, requestIdHeaders } from "./requestContext"
import { securityHeaders } from "./securityHeaders"

/** One forwarding endpoint as the lane serves it: what its declaration says, and its service's call on a raw body. */
interface LaneRoute {
  readonly endpoint: {
    readonly provider: Provider
    readonly path: string
    readonly family: LimitFamily
    readonly passedHeaders: ReadonlyArray<string>
  }
  readonly serveRequest: ServeRequest
}

const refused = (problem: Problem): InvalidRequest => new InvalidRequest({ problem })

/**
 * The answer's headers as one object, which Node's writeHead then takes as it is (no header was set on the
 * response before: src/http/server.ts leaves the security headers to the lane). Same names in the same order
 * as when they were set one by one: the security headers first, the answer's own, the request id, the body's.
 * Object.assign and plain sets rather than a literal spreading three objects, which on Node 20 allocated ~3.3 KB
 * (new maps, in the old generation) where this takes ~0.3 KB; the names are the service's own, none of them
 * __proto__, so both give the same object.
 */
const writeJson = (
  response: http.ServerResponse,
  status: number,
  body: string | Uint8Array,
  headers: Readonly<Record<string, string>>,
  idHeaders: Readonly<Record<string, string>>
) => {
  const all: Record<string, string> = Object.assign({}, securityHeaders, headers, idHeaders)
  all["content-type"] = "application/json"
  all["content-length"] = String(Buffer.byteLength(body))
  response.writeHead(status, all)
  response.end(body)
}

/** A request answered (its status, for the log line). */
const answered = Effect.succeed(200)

const internalError: Problem = { status: 500, code: "internal_error", message: "The service failed to answer. Retry shortly." }

/**
 * The forwarded endpoints, served straight from node:http. Its routes come from the same served list
 * as the HttpApi handlers (src/handlers/forwarded.ts, over the endpoints' one declaration), and it
 * answers exactly as the HttpApi app does — same checks in the same order, same refusals rendered by
 * the same dialect, same request id and log line — but skips the framework's
 * per-request machinery, which cost more CPU than all the rest of a forwarded request
 * (bench/RESULTS.md, "Gateway"). Whatever it does not recognise (another method, path or content
 * type) it leaves to the HttpApi app.
 */
export class ForwardingLane extends Context.Tag("ForwardingLane")<ForwardingLane, {
  /** Serves the request and returns true when it is one of the lane's; else touches nothing. */
  readonly claim: (request: http.IncomingMessage, response: http.ServerResponse) => boolean
}>() {
  /** No lane: the HttpApi app answers everything (the reference the lane is tested against). */
  static readonly none = Layer.succeed(ForwardingLane, { claim: () => false })

  static readonly layer = Layer.scoped(
    ForwardingLane,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const { basePath, logFormat, maxBodyBytes } = config
      const span = spansWhen(config)
      const tracing = Option.isSome(config.tracing)
      const auth = yield* AuthService
      const addressOf = clientAddressOf(config)
      const metrics = yield* Metrics
      // Keyed `<provider><path>` (provider_a/v1/chat/completions), from the declared endpoints.
      const routes = new Map<string, LaneRoute>(
        Object.values(yield* forwardedServices).map((served) => [`${served.endpoint.provider.id}${served.endpoint.path}`, served])
      )
      const runtime = yield* Effect.runtime<never>()
      const runFork = Runtime.runFork(runtime)
      const accessLog = accessLogFor(runtime, logFormat)
      // Requests being served. Released after the server (which has closed every connection by
      // then, busy ones at the end of the grace): what is still running was cut and is waited
      // for, so that the usage of a stream cut at shutdown is recorded before the recorder's last flush.
      const running = new Set<Fiber.RuntimeFiber<number>>()
      yield* Effect.addFinalizer(() => Fiber.interruptAll([...running]))

      /** A refusal's answer in the provider's format, with its headers and the request id. */
      const answerProblem = (
        provider: Provider,
        response: http.ServerResponse,
        requestId: string,
        problem: Problem,
        headers: Readonly<Record<string, string>>
      ) => {
        const { body, status } = wireError(provider.id, problem)
        writeJson(response, status, body, headers, requestIdHeaders(requestId))
        return status
      }
      // A defect is not the caller's fault: logged, and answered with 500 if nothing was sent yet.
      const answerDefect = (provider: Provider, response: http.ServerResponse, requestId: string, defect: unknown) =>
        Effect.zipRight(
          Effect.logError("request failed", defect).pipe(Effect.annotateLogs({ requestId })),
          Effect.sync(() => {
            if (!response.headersSent) return answerProblem(provider, response, requestId, internalError, {})
            response.destroy()
            return 500
          })
        )

      // What a request keeps while it waits (for its body, the upstream, the answer) is copied by every scavenge
      // meanwhile: one continuation a step rather than a generator and its frame, and the refusal's answer made
      // only for a refusal.
      const serve = ({ endpoint, serveRequest }: LaneRoute, region: string, path: string, request: http.IncomingMessage, response: http.ServerResponse) => {
        const requestId = requestIdFor(request.headers["x-request-id"] as string | undefined)
        const address = addressOf(request)
        // Checked in the framework's order: declared size, key, then the body and its payload (read, decoded and
        // served as the HttpApi handlers do, refusals charged by the same rule). Suspended: a throw is a defect.
        const answer = Effect.suspend(() =>
          Number(request.headers["content-length"]) > maxBodyBytes
            ? Effect.fail(refused(tooLarge(maxBodyBytes)))
            : flatMapNow(
              span("auth")(
                checkKey(auth, address, request.headers as Record<string, string | undefined>, "COMPLETION_API", endpoint.provider.keyHeaders.xApiKey)
              ),
              (principal) =>
                Effect.flatMap(serveRequest(principal, region, request, requestId, maxBodyBytes), (forwarded) => {
                  if (forwarded._tag === "Json") {
                    writeJson(response, 200, forwarded.body, forwarded.headers, requestIdHeaders(requestId))
                    return answered
                  }
                  return Effect.zipRight(writeStream(response, forwarded, securityHeaders, requestIdHeaders(requestId)), answered)
                })
            )
        ).pipe(
          // One handler for refusals and defects (an interruption passes: 499): a request that succeeds meets one frame.
          Effect.catchAllCause((cause) => {
            const failure = Cause.failureOrCause(cause)
            if (Either.isLeft(failure)) {
              const refusal = failure.left
              return Effect.catchAllDefect(
                Effect.sync(() => {
                  const { headers, problem } = refusal._tag === "CredentialRefusal" ? refusal : renderRefusal(endpoint.provider, refusal)
                  return answerProblem(endpoint.provider, response, requestId, problem, headers)
                }),
                (defect) => answerDefect(endpoint.provider, response, requestId, defect)
              )
            }
            const defect = Cause.dieOption(cause)
            return Option.isSome(defect) ? answerDefect(endpoint.provider, response, requestId, defect.value) : Effect.failCause(failure.right)
          })
        )
        const started = performance.now()
        const fiber = runFork(tracing ? serverSpan(endpoint, path, request, answer) : answer)
        running.add(fiber)
        // The request's log line, written once the fiber has ended: no log call inside it.
        fiber.addObserver((exit) => {
          running.delete(fiber)
          const status = endStatus(exit)
          metrics.request(endpoint.family, status)
          accessLog({
            requestId,
            method: "POST",
            path,
            status,
            durationMs: Math.round((performance.now() - started) * 10) / 10,
            address: address ?? "unknown",
            fiberId: fiberName(fiber.id())
          })
        })
        // A client that goes away stops the work done for it (and the upstream exchange). A response closes
        // once: `on` rather than `once`, which wraps the listener in another function and its state.
        response.on("close", () => {
          if (!response.writableEnded) fiber.unsafeInterruptAsFork(FiberId.none)
        })
      }

      /**
       * The request's span, as the framework's tracer makes one for the HttpApi app: a child of the
       * caller's `traceparent` when it sent one, named by the route (not the path, which has the region).
       */
      const serverSpan = (endpoint: LaneRoute["endpoint"], path: string, request: http.IncomingMessage, answer: Effect.Effect<number>) => {
        const caller = parseTraceparent(request.headers.traceparent)
        return answer.pipe(
          Effect.tap((status) => Effect.annotateCurrentSpan("http.response.status_code", status)),
          Effect.withSpan(`POST /${endpoint.provider.id}/{region}${endpoint.path}`, {
            kind: "server",
            parent: caller === undefined ? undefined : Tracer.externalSpan(caller),
            attributes: { "http.request.method": "POST", "url.path": path, "wsapi.family": endpoint.family },
            captureStackTrace: false
          })
        )
      }

      return {
        claim: (request, response) => {
          if (request.method !== "POST" || request.url === undefined) return false
          const query = request.url.indexOf("?")
          const path = query === -1 ? request.url : request.url.slice(0, query)
          if (!path.startsWith(basePath)) return false
          // `/<provider>/<region><endpoint path>` under BASE_PATH: the route is found by provider and path.
          const providerAt = basePath.length
          const regionAt = path.indexOf("/", providerAt + 1) + 1
          const pathAt = regionAt === 0 ? -1 : path.indexOf("/", regionAt)
          if (path[providerAt] !== "/" || pathAt <= regionAt) return false
          const route = routes.get(path.slice(providerAt + 1, regionAt - 1) + path.slice(pathAt))
          // The framework reads other content types differently: leave those requests to it.
          if (route === undefined || !isJsonOrUndeclared(request.headers["content-type"])) return false
          const region = safeDecode(path.slice(regionAt, pathAt))
          if (region === undefined) return false
          serve(route, region, path, request, response)
          return true
        }
      }
    })
  )
}

const safeDecode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}
