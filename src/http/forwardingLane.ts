import { HttpApiError } from "@effect/platform"
import { Context, Effect, Fiber, FiberId, Layer, Runtime, Schema } from "effect"
import type * as http from "node:http"
import { ChatCompletionRequest } from "../providers/providerA/chatCompletionsWire"
import { EmbeddingRequest } from "../providers/providerA/embeddingsWire"
import { FimCompletionRequest } from "../providers/providerC/fimWire"
import { MessagesRequest } from "../providers/providerB/messagesWire"
import { AppConfig } from "../config"
import { parseJson } from "../providers/protocol"
import { InvalidRequest, type Refusal, wasAdmitted } from "../domain/refusals"
import { scanBodiesOver, tooManyMessages, tooManyRawMessages } from "../domain/requestBounds"
import type { Provider } from "../providers/provider"
import { providerA } from "../providers/providerA/dialect"
import { providerB } from "../providers/providerB/dialect"
import { providerC } from "../providers/providerC/dialect"
import { renderRefusal } from "../providers/render"
import type { LimitFamily } from "../domain/workspaceSettings"
import { AuthService } from "../services/AuthService"
import { type Principal } from "../domain/principal"
import { ChatCompletions } from "../providers/providerA/ChatCompletions"
import { Embeddings } from "../providers/providerA/Embeddings"
import { FimCompletions } from "../providers/providerC/FimCompletions"
import type { Forwarded } from "../services/Forwarder"
import { Messages } from "../providers/providerB/Messages"
import { RateLimits } from "../services/RateLimits"
import { checkKey } from "./authMiddleware"
import { CredentialThrottle } from "./credentialThrottle"
import { type Problem, wireError } from "./errorFormat"
import { decodeProblem, isJsonOrUndeclared, malformedBody, tooLarge } from "./failureToProblem"
import { writeStream } from "./forwardedResponse"
import { accessLogFor, endStatus } from "./accessLog"
import { requestIdFor, requestIdHeaders } from "./requestContext"

/** One forwarding endpoint: its provider (error format, where its key may be), and how its payload is served. */
interface LaneRoute {
  readonly provider: Provider
  /** The rate-limit family its requests, refused ones too, count in. */
  readonly family: LimitFamily
  /** A refusal found on the raw body before it is decoded (cheap: counts, not contents). */
  readonly bound?: (body: unknown) => Refusal | undefined
  /** The same, on the raw bytes of a large body, before it is parsed. */
  readonly scan?: (body: Buffer) => Refusal | undefined
  readonly serve: (
    principal: Principal,
    region: string,
    body: unknown,
    requestId: string,
    headers: http.IncomingHttpHeaders
  ) => Effect.Effect<Forwarded, Refusal>
}

/** A refused key: answered as the authentication checks word it (a plain value: floods capture no stacks). */
interface KeyRefused {
  readonly _tag: "KeyRefused"
  readonly problem: Problem
  readonly headers: Readonly<Record<string, string>>
}

const refused = (problem: Problem): InvalidRequest => new InvalidRequest({ problem })

/**
 * Effect's parser throws on a union's tag that is an object which cannot be turned into text (JSON
 * such as `{"type": {"toString": 0}}`): the body is refused, not answered with a 500.
 */
const unreadableBody: Problem = {
  status: 400,
  code: "invalid_request",
  message: "The request body is invalid: a field that names a type holds an object where text was expected."
}

/** The payload as the endpoint declares it, or the 400 HttpApi would answer (first bad field named). */
const decoded = <A, I>(schema: Schema.Schema<A, I>, body: unknown): Effect.Effect<A, InvalidRequest> =>
  // Suspended: the parser runs when decodeUnknown is called, and its throw must land in the effect.
  Effect.suspend(() => Schema.decodeUnknown(schema)(body)).pipe(
    Effect.catchTag("ParseError", (error) =>
      Effect.flatMap(HttpApiError.HttpApiDecodeError.fromParseError(error), (decodeError) => Effect.fail(refused(decodeProblem(decodeError))))),
    Effect.catchAllDefect(() => Effect.fail(refused(unreadableBody)))
  )

/** The whole request body, refused beyond the limit. */
const readRequestBody = (request: http.IncomingMessage, limit: number): Effect.Effect<Buffer, InvalidRequest> =>
  Effect.async((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    request.on("data", (chunk: Buffer) => {
      if (done) return
      size += chunk.length
      if (size <= limit) return void chunks.push(chunk)
      done = true
      resume(Effect.fail(refused(tooLarge(limit))))
    })
    request.once("end", () => {
      if (!done) resume(Effect.succeed(Buffer.concat(chunks, size)))
    })
  })

const writeJson = (response: http.ServerResponse, status: number, body: string | Uint8Array, headers: Readonly<Record<string, string>>) => {
  response.writeHead(status, { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) })
  response.end(body)
}

const internalError: Problem = { status: 500, code: "internal_error", message: "The service failed to answer. Retry shortly." }

/** `/<provider>/<region>/v1/...` under BASE_PATH. */
const routePattern = /^\/(provider_[abc])\/([^/]+)(\/v1\/[a-z/]+)$/

/**
 * The four forwarding endpoints, served straight from node:http. They are declared in the HttpApi
 * (docs, OpenAPI, the same handlers behind it) and answer exactly as it does — same checks in the
 * same order, same error bodies, same request id and log line — but skip the framework's
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
      const { basePath, maxBodyBytes } = yield* AppConfig
      const auth = yield* AuthService
      const rateLimits = yield* RateLimits
      const throttle = yield* CredentialThrottle
      const chat = yield* ChatCompletions
      const embeddings = yield* Embeddings
      const messages = yield* Messages
      const fim = yield* FimCompletions
      const runtime = yield* Effect.runtime<never>()
      const runFork = Runtime.runFork(runtime)
      const accessLog = accessLogFor(runtime)
      // Requests being served. Released after the server (which has closed every connection by
      // then, busy ones at the end of the grace): what is still running was cut and is waited
      // for, so that the usage of a stream cut at shutdown is recorded before the recorder's last flush.
      const running = new Set<Fiber.RuntimeFiber<number>>()
      yield* Effect.addFinalizer(() => Fiber.interruptAll([...running]))

      const routes = new Map<string, LaneRoute>([
        ["provider_a/v1/chat/completions", {
          provider: providerA,
          family: "chat_completions",
          bound: (body) => tooManyMessages("provider_a", "chat_completions", body),
          scan: (body) => tooManyRawMessages("provider_a", "chat_completions", body),
          serve: (principal, region, body, requestId) =>
            Effect.flatMap(decoded(ChatCompletionRequest, body), (payload) => chat.create(principal, region, payload, requestId))
        }],
        ["provider_a/v1/embeddings", {
          provider: providerA,
          family: "embeddings",
          serve: (principal, region, body, requestId) =>
            Effect.flatMap(decoded(EmbeddingRequest, body), (payload) => embeddings.create(principal, region, payload, requestId))
        }],
        ["provider_b/v1/messages", {
          provider: providerB,
          family: "messages",
          bound: (body) => tooManyMessages("provider_b", "messages", body),
          scan: (body) => tooManyRawMessages("provider_b", "messages", body),
          serve: (principal, region, body, requestId, headers) =>
            Effect.flatMap(decoded(MessagesRequest, body), (payload) =>
              messages.create(principal, region, payload, requestId, oneHeader(headers["anthropic-beta"])))
        }],
        ["provider_c/v1/fim/completions", {
          provider: providerC,
          family: "fim",
          serve: (principal, region, body, requestId) =>
            Effect.flatMap(decoded(FimCompletionRequest, body), (payload) => fim.create(principal, region, payload, requestId))
        }]
      ])

      const serve = (route: LaneRoute, region: string, path: string, request: http.IncomingMessage, response: http.ServerResponse) => {
        const requestId = requestIdFor(request.headers["x-request-id"] as string | undefined)
        const idHeaders = requestIdHeaders(requestId)
        const answerProblem = (problem: Problem, headers: Readonly<Record<string, string>>) => {
          const { body, status } = wireError(route.provider.id, problem)
          writeJson(response, status, body, { ...headers, ...idHeaders })
          return status
        }
        const answer = Effect.gen(function*() {
          // Checked in the framework's order: declared size, key, then the body and its payload.
          if (Number(request.headers["content-length"]) > maxBodyBytes) return yield* Effect.fail(refused(tooLarge(maxBodyBytes)))
          const principal = yield* Effect.mapError(
            checkKey(
              auth,
              throttle,
              request.socket.remoteAddress,
              request.headers as Record<string, string | undefined>,
              "COMPLETION_API",
              route.provider.keyHeaders.xApiKey
            ),
            ({ headers, problem }): KeyRefused => ({ _tag: "KeyRefused", problem, headers })
          )
          const forwarded = yield* Effect.gen(function*() {
            const body = yield* readRequestBody(request, maxBodyBytes)
            // A large body of many messages is refused on a scan of its bytes, before it is parsed.
            const crowded = route.scan !== undefined && body.length > scanBodiesOver ? route.scan(body) : undefined
            if (crowded !== undefined) return yield* Effect.fail(crowded)
            // As the framework reads it: an empty body is null (then refused by the payload's schema).
            const json = body.length === 0 ? null : parseJson(body.toString("utf8"))
            if (json === undefined) return yield* Effect.fail(refused(malformedBody))
            const bound = route.bound?.(json)
            if (bound !== undefined) return yield* Effect.fail(bound)
            return yield* route.serve(principal, region, json, requestId, request.headers)
          }).pipe(
            // A refused request spends a request of the workspace's budget like any other: refusals
            // cost work too, and a workspace over its limit is told so (429) rather than validated.
            Effect.catchAll((refusal) =>
              wasAdmitted(refusal)
                ? Effect.fail(refusal)
                : rateLimits.admit({ principal, family: route.family, tokens: 0 }).pipe(
                  Effect.flatMap(() => Effect.fail(refusal))
                ))
          )
          if (forwarded._tag === "Json") {
            writeJson(response, 200, forwarded.body, { ...forwarded.headers, ...idHeaders })
            return 200
          }
          yield* writeStream(response, forwarded, idHeaders)
          return 200
        }).pipe(
          Effect.catchAll((failure) =>
            Effect.sync(() => {
              const { headers, problem } = failure._tag === "KeyRefused" ? failure : renderRefusal(route.provider, failure)
              return answerProblem(problem, headers)
            })
          ),
          // A defect is not the caller's fault: logged, and answered with 500 if nothing was sent yet.
          Effect.catchAllDefect((defect) =>
            Effect.zipRight(
              Effect.logError("request failed", defect).pipe(Effect.annotateLogs({ requestId })),
              Effect.sync(() => {
                if (!response.headersSent) return answerProblem(internalError, {})
                response.destroy()
                return 500
              })
            ))
        )
        const started = performance.now()
        const fiber = runFork(answer)
        running.add(fiber)
        // The request's log line, written once the fiber has ended: no log call inside it.
        fiber.addObserver((exit) => {
          running.delete(fiber)
          accessLog({
            requestId,
            method: "POST",
            path,
            status: endStatus(exit),
            durationMs: Math.round((performance.now() - started) * 10) / 10,
            fiberId: FiberId.threadName(fiber.id())
          })
        })
        // A client that goes away stops the work done for it (and the upstream exchange).
        response.once("close", () => {
          if (!response.writableEnded) fiber.unsafeInterruptAsFork(FiberId.none)
        })
      }

      return {
        claim: (request, response) => {
          if (request.method !== "POST" || request.url === undefined) return false
          const query = request.url.indexOf("?")
          const path = query === -1 ? request.url : request.url.slice(0, query)
          if (!path.startsWith(basePath)) return false
          const match = routePattern.exec(path.slice(basePath.length))
          const route = match === null ? undefined : routes.get(`${match[1]}${match[3]}`)
          const contentType = request.headers["content-type"]
          // The framework reads other content types differently: leave those requests to it.
          if (match === null || route === undefined || !isJsonOrUndeclared(contentType)) {
            return false
          }
          const region = safeDecode(match[2]!)
          if (region === undefined) return false
          serve(route, region, path, request, response)
          return true
        }
      }
    })
  )
}

/** A header sent more than once is read as Node joins it for the framework: comma-separated. */
const oneHeader = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" || value === undefined ? value : value.join(", ")

const safeDecode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}
