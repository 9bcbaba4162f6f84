import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Either, FiberRef } from "effect"
import type * as http from "node:http"
import { CurrentPrincipal } from "../api/security"
import { malformedBody, nestedTooDeep, payloadDecoder, tooLarge } from "../api/requestProblems"
import { onePassDecoding } from "../domain/onePassDecoding"
import type { Principal } from "../domain/principal"
import { InvalidRequest, type Refusal, wasAdmitted } from "../domain/refusals"
import type { LimitFamily } from "../domain/workspaceSettings"
import type { Catalog } from "../domain/models"
import { ModelCatalog } from "../services/forwarding/ModelCatalog"
import { RateLimits } from "../services/limits/RateLimits"
import { maxJsonDepth, tooDeepPath } from "../domain/jsonDepth"
import { largeBodyBytes } from "../domain/requestBounds"
import { LargeBodies, type LargeBodyTicket, type ReleaseLargeBodySlot } from "../services/forwarding/LargeBodies"
import { yieldToEventLoop } from "../platform/eventLoopTurn"
import { parseJson } from "../providers/protocol"
import type { ForwardedEndpoint } from "../providers/forwardedEndpoint"
import { ChatCompletions } from "../services/endpoints/ChatCompletions"
import { Embeddings } from "../services/endpoints/Embeddings"
import { chatCompletions, embeddings, responses } from "../providers/providerA/endpoints"
import { Responses } from "../services/endpoints/Responses"
import { CountTokens } from "../services/endpoints/CountTokens"
import { countTokens, messages } from "../providers/providerB/endpoints"
import { Messages } from "../services/endpoints/Messages"
import { fimCompletions } from "../providers/providerC/endpoints"
import { FimCompletions } from "../services/endpoints/FimCompletions"
import type { EndpointCheck } from "../services/endpoints/endpointCall"
import { EndpointForwarding } from "../services/forwarding/EndpointForwarding"
import type { Provider } from "../providers/provider"
import { renderRefusal } from "../providers/render"
import type { Forwarded, StreamSink } from "../services/forwarding/Forwarder"
import { type FormatErrors, problemAs } from "../api/errors/errorFormat"
import { currentRequestId, requestIdHeaders } from "./requestId"
import { graceEnded } from "./graceEnded"

/**
 * The whole request body, refused beyond the limit. A large one (declared so, or found so as it comes) is read
 * only when `letIn` lets it in, decided before its first byte is read when its length is declared. The bytes are
 * received into one buffer of the declared length (no chunks kept and joined: the listeners, and so what they
 * hold, live as long as the request). The read resumes with `then` of the body: what follows it runs in the read's
 * own step (no step of its own to hand the body on), a throw of `then` a defect as it would be in a step.
 */
const readRequestBody = <A>(
  request: http.IncomingMessage,
  limit: number,
  letIn: () => Refusal | undefined,
  then: (body: Buffer) => Effect.Effect<A, Refusal>
): Effect.Effect<A, Refusal> =>
  Effect.async((resume) => {
    const declared = Number(request.headers["content-length"])
    const sized = Number.isInteger(declared) && declared >= 0 && declared <= limit
    if (sized && declared > largeBodyBytes) {
      const refused = letIn()
      if (refused !== undefined) return resume(Effect.fail(refused))
    }
    let whole: Buffer | undefined = sized ? Buffer.allocUnsafe(declared) : undefined
    // Made only for a body read in pieces (not declared, or longer than declared).
    let chunks: Array<Buffer> | undefined
    let size = 0
    let done = false
    const fail = (refusal: Refusal) => {
      done = true
      whole = undefined
      chunks = undefined
      resume(Effect.fail(refusal))
    }
    const onData = (chunk: Buffer) => {
      if (done) return
      if (size + chunk.length > limit) return fail(new InvalidRequest({ problem: tooLarge(limit) }))
      if (!sized && size <= largeBodyBytes && size + chunk.length > largeBodyBytes) {
        const refused = letIn()
        if (refused !== undefined) return fail(refused)
      }
      if (whole !== undefined && size + chunk.length > whole.length) {
        // More than declared (the parser does not allow it): kept as chunks from here.
        chunks = [whole.subarray(0, size)]
        whole = undefined
      }
      if (whole !== undefined) chunk.copy(whole, size)
      else (chunks ??= []).push(chunk)
      size += chunk.length
    }
    request.on("data", onData)
    request.once("end", () => {
      if (done) return
      done = true
      // The request lives until it is answered: its listener (and all this holds) need not.
      request.removeListener("data", onData)
      const body = whole !== undefined ? (size === whole.length ? whole : whole.subarray(0, size)) : Buffer.concat(chunks ?? [], size)
      whole = undefined
      chunks = undefined
      let next: Effect.Effect<A, Refusal>
      try {
        next = then(body)
      } catch (defect) {
        next = Effect.die(defect)
      }
      resume(next)
    })
  })

/** How forwarded bodies are read: their size limit (MAX_BODY_BYTES) and the instance's large-body room. */
export interface BodyReading {
  readonly maxBodyBytes: number
  readonly largeBodies: LargeBodies["Type"]
}

/**
 * The one body reader of the forwarded endpoints, for the lane and the HttpApi handlers alike: reads the whole
 * body (refused beyond MAX_BODY_BYTES), then parses it and hands its JSON to `serve`. A large body is let in
 * first (LargeBodies: a few per instance and per workspace, refused before it is read beyond that), then
 * processed holding one of the instance's slots, its turn awaited, until it goes upstream; it is scanned for
 * its message count before it is parsed, and the event loop gets a turn between those steps. The JSON is
 * refused when it is nested too deep (before anything walks it recursively) or fails the endpoint's cheap
 * bounds; an empty body is null, as the framework reads it. The payload is decoded by `serve`, which is given
 * the large body's slot release to run as the request goes upstream (undefined for a body that holds none).
 */
export const withForwardedBody = <A>(
  endpoint: {
    readonly bound?: ((body: unknown) => Refusal | undefined) | undefined
    readonly scan?: ((body: Buffer) => Refusal | undefined) | undefined
  },
  request: http.IncomingMessage,
  reading: BodyReading,
  workspaceId: string,
  serve: (json: unknown, release: ReleaseLargeBodySlot | undefined) => Effect.Effect<A, Refusal>
): Effect.Effect<A, Refusal> => {
  // Most bodies: declared small, so never let in as large (readRequestBody asks `letIn` only of a body declared
  // larger, or of one not declared): no ticket to leave, so no finalizer; parsed and served in the read's step.
  const declared = Number(request.headers["content-length"])
  if (Number.isInteger(declared) && declared >= 0 && declared <= largeBodyBytes) {
    return readRequestBody(request, reading.maxBodyBytes, neverLarge, (body) => servedBody(endpoint, body, undefined, serve))
  }
  return Effect.suspend(() => {
    let ticket: LargeBodyTicket | undefined
    const letIn = (): Refusal | undefined =>
      Either.match(reading.largeBodies.admit(workspaceId), {
        onLeft: (busy) => busy,
        onRight: (admitted) => {
          ticket = admitted
          return undefined
        }
      })
    return readRequestBody(request, reading.maxBodyBytes, letIn, (body): Effect.Effect<A, Refusal> => {
      if (ticket === undefined) return servedBody(endpoint, body, undefined, serve)
      // Its bytes are let go once parsed, though the request goes on for a while (upstream).
      let bytes: Buffer | undefined = body
      return ticket.process((release) => Effect.suspend(() => {
        const large = bytes ?? Buffer.alloc(0)
        bytes = undefined
        const crowded = endpoint.scan?.(large)
        if (crowded !== undefined) return Effect.fail(crowded)
        // Parsed after a turn (servedBody parses when called), decoded and served after another.
        return Effect.flatMap(
          yieldToEventLoop,
          () => servedBody(endpoint, large, release, (json, release) => Effect.flatMap(yieldToEventLoop, () => serve(json, release)))
        )
      }))
    }).pipe(Effect.ensuring(Effect.sync(() => ticket?.leave())))
  })
}

/** The `letIn` of a body declared at most largeBodyBytes long, which readRequestBody never calls. */
const neverLarge = (): Refusal | undefined => undefined

/** The body's JSON, checked for depth and the endpoint's bounds, handed to `serve` with `release` (no step of its own). */
const servedBody = <A>(
  endpoint: { readonly bound?: ((body: unknown) => Refusal | undefined) | undefined },
  body: Buffer,
  release: ReleaseLargeBodySlot | undefined,
  serve: (json: unknown, release: ReleaseLargeBodySlot | undefined) => Effect.Effect<A, Refusal>
): Effect.Effect<A, Refusal> => {
  const json = body.length === 0 ? null : parseJson(body.toString("utf8"))
  if (json === undefined) return Effect.fail(new InvalidRequest({ problem: malformedBody }))
  const deep = tooDeepPath(json, maxJsonDepth)
  if (deep !== undefined) return Effect.fail(new InvalidRequest({ problem: nestedTooDeep(deep) }))
  const bound = endpoint.bound?.(json)
  return bound === undefined ? serve(json, release) : Effect.fail(bound)
}

const streamHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" }

const noStreamHeaders: Readonly<Record<string, string>> = {}

/**
 * The client's connection as a stream sink: one object a stream, its methods shared (an object of closures over the
 * response was six a stream).
 */
class ResponseSink implements StreamSink {
  constructor(private readonly response: http.ServerResponse) {}
  write(text: string | Uint8Array): boolean {
    return this.response.write(text)
  }
  onDrain(resume: () => void): void {
    this.response.once("drain", resume)
  }
  end(): void {
    this.response.end()
  }
  cut(inBandError: string, afterCut: () => void): void {
    const response = this.response
    response.write(inBandError, () => {
      response.destroy()
      // Marks the response ended, so the server does not try to answer it again.
      response.end()
      afterCut()
    })
  }
  onGraceEnd(stop: () => void): void {
    // `on`, not `once` (a wrapper and its state a stream): the grace ends once, and the relay's `stop` acts once.
    this.response.on(graceEnded, stop)
  }
}

/**
 * Writes a relayed stream to the connection: status and headers (the stream's, the answer's, `headers`, then
 * `idHeaders`, in that order), then the events as they come.
 */
export const writeStream = (
  response: http.ServerResponse,
  answer: Extract<Forwarded, { _tag: "Stream" }>,
  headers: Readonly<Record<string, string>>,
  idHeaders: Readonly<Record<string, string>>
): Effect.Effect<void> => {
  // Object.assign rather than a literal spreading the objects, which allocated ~3.5 KB more a response (Node 20; the
  // names are the service's own, none of them __proto__, so both give the same object); one merge, the caller's
  // headers not merged first.
  response.writeHead(200, Object.assign({}, streamHeaders, answer.headers, headers, idHeaders))
  return answer.relay(new ResponseSink(response))
}

/**
 * A stream is written straight to the connection (the server's own stream bodies cost more CPU
 * than the rest of the request); the server then finds the response ended and leaves it. The
 * request id headers are set here, as the request-context middleware would on other answers.
 */
const relayed = (request: HttpServerRequest.HttpServerRequest, answer: Extract<Forwarded, { _tag: "Stream" }>) =>
  Effect.flatMap(FiberRef.get(currentRequestId), (requestId) =>
    writeStream(
      NodeHttpServerRequest.toServerResponse(request),
      answer,
      noStreamHeaders,
      requestId === undefined ? noStreamHeaders : requestIdHeaders(requestId)
    ).pipe(Effect.as(HttpServerResponse.empty({ status: 200 }))))

/** Answers with what was forwarded, or with the refusal as the provider renders it (its headers on the answer). */
export const respond = <P extends Provider>(
  provider: P,
  forwarded: Effect.Effect<Forwarded, Refusal>
): Effect.Effect<HttpServerResponse.HttpServerResponse, FormatErrors[P["id"]], HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    forwarded.pipe(
      Effect.flatMap((answer) =>
        answer._tag === "Json"
          ? Effect.succeed(HttpServerResponse.uint8Array(answer.body, { contentType: "application/json", headers: answer.headers }))
          : relayed(request, answer)
      ),
      Effect.catchAll((refusal) => {
        const { headers, problem } = renderRefusal(provider, refusal)
        return Effect.zipRight(
          Object.keys(headers).length === 0
            ? Effect.void
            : HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers))),
          Effect.fail(problemAs<P["id"]>(provider.id, problem))
        )
      })
    ))

/** Headers as either path reads them: Node's (a repeated header as a list) or the framework's. */
export type RequestHeaders = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** The caller headers an endpoint passes on, one value each. */
export type PassedHeaders = Readonly<Record<string, string | undefined>>

const noHeaders: PassedHeaders = {}

/** A header sent more than once is read as Node joins it for the framework: comma-separated. */
const oneHeader = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" || value === undefined ? value : value.join(", ")

/** The endpoint's passed headers of a request (no object made for endpoints that pass none). */
export const passedHeaders = (endpoint: { readonly passedHeaders: ReadonlyArray<string> }, headers: RequestHeaders): PassedHeaders => {
  if (endpoint.passedHeaders.length === 0) return noHeaders
  const passed: Record<string, string | undefined> = {}
  for (const name of endpoint.passedHeaders) passed[name] = oneHeader(headers[name])
  return passed
}

/** How an endpoint is served: its service's call, with the decoded payload. */
export type Serve<Payload> = (
  principal: Principal,
  region: string,
  payload: Payload,
  requestId: string | undefined,
  headers: PassedHeaders,
  release: ReleaseLargeBodySlot | undefined
) => Effect.Effect<Forwarded, Refusal>

/**
 * How both edges serve an authenticated request of an endpoint: the request's body read from the
 * connection, decoded and served, a refusal charged to the limits (`chargingRefusals`).
 */
export type ServeRequest = (
  principal: Principal,
  region: string,
  request: http.IncomingMessage,
  requestId: string | undefined,
  maxBodyBytes: number
) => Effect.Effect<Forwarded, Refusal>

/** A declared endpoint with the call that serves it; `serveRequest` is the one way in of the lane and the HttpApi handlers. */
export interface Served<Name extends string, P extends Provider, Payload, PayloadI, Success, SuccessI> {
  readonly endpoint: ForwardedEndpoint<Name, P, Payload, PayloadI, Success, SuccessI>
  readonly serve: Serve<Payload>
  readonly serveRequest: ServeRequest
}

/**
 * The refused-request rule (docs/rate-limits.md), the same on both edges: a request refused after
 * authentication before it reached the limits (a bad field, an unknown model, a body over the limit or
 * not JSON) spends a request of its family's budget like any other — refusals cost work too, and a
 * workspace over its limit is told so (429) rather than validated again and again. A refusal that came
 * through the limits (admitted, or refused by them) has been counted already.
 */
export const chargingRefusals = (
  rateLimits: RateLimits["Type"],
  principal: Principal,
  family: LimitFamily
) =>
<A>(serving: Effect.Effect<A, Refusal>): Effect.Effect<A, Refusal> =>
  // catchIf: one frame on the way of a request that succeeds (catchAll adds a second step there).
  Effect.catchIf(
    serving,
    (refusal) => !wasAdmitted(refusal),
    (refusal) => Effect.flatMap(rateLimits.admit({ principal, family, tokens: 0 }), () => Effect.fail(refusal))
  )

export const served = <const Name extends string, P extends Provider, Payload, PayloadI, Success, SuccessI>(
  endpoint: ForwardedEndpoint<Name, P, Payload, PayloadI, Success, SuccessI>,
  serve: Serve<Payload>,
  rateLimits: RateLimits["Type"],
  largeBodies: LargeBodies["Type"],
  catalog: Catalog
): Served<Name, P, Payload, PayloadI, Success, SuccessI> => {
  // Made once: the same values and errors as the declared payload, without its second pass (src/domain/onePassDecoding.ts).
  const decodePayload = payloadDecoder(onePassDecoding(endpoint.payload))
  // The declaration's bounds over the gateway's catalog (an operator's model has its own context), bound once.
  const { bound, scan } = endpoint
  const bounds = {
    bound: bound === undefined ? undefined : (body: unknown) => bound(body, catalog),
    scan: scan === undefined ? undefined : (body: Buffer) => scan(body, catalog)
  }
  return {
    endpoint,
    serve,
    serveRequest: (principal, region, request, requestId, maxBodyBytes) =>
      withForwardedBody(
        bounds,
        request,
        { maxBodyBytes, largeBodies },
        principal.workspace.id,
        (body, release) => {
          // Decoded in the step that read the body: a refused payload is a failure, not a step of its own.
          const payload = decodePayload(body)
          return Either.isRight(payload)
            ? serve(principal, region, payload.right, requestId, passedHeaders(endpoint, request.headers), release)
            : Effect.fail(payload.left)
        }
      ).pipe(chargingRefusals(rateLimits, principal, endpoint.family))
  }
}

/**
 * Every forwarded endpoint with the service call that serves it: the HttpApi handlers and the
 * forwarding lane both serve from this one list.
 */
export const forwardedServices = Effect.gen(function*() {
  const { serve } = yield* EndpointForwarding
  const rateLimits = yield* RateLimits
  const largeBodies = yield* LargeBodies
  const catalog = yield* ModelCatalog
  const each = <const Name extends string, P extends Provider, Payload, PayloadI, Success, SuccessI>(
    endpoint: ForwardedEndpoint<Name, P, Payload, PayloadI, Success, SuccessI>,
    check: EndpointCheck<Payload>
  ) => served(endpoint, serve(endpoint, check), rateLimits, largeBodies, catalog)
  return {
    chatCompletions: each(chatCompletions, (yield* ChatCompletions).check),
    embeddings: each(embeddings, (yield* Embeddings).check),
    responses: each(responses, (yield* Responses).check),
    messages: each(messages, (yield* Messages).check),
    countTokens: each(countTokens, (yield* CountTokens).check),
    fimCompletions: each(fimCompletions, (yield* FimCompletions).check)
  } as const
})

/**
 * The HttpApi handler of a served endpoint (a raw one: the body is read by the lane's reader, not the
 * framework's): the caller and the request id, then the request served as the lane serves it.
 */
export const handlerOf = <Name extends string, P extends Provider, Payload, PayloadI, Success, SuccessI>(
  { endpoint, serveRequest }: Served<Name, P, Payload, PayloadI, Success, SuccessI>,
  maxBodyBytes: number
) =>
({ path, request }: { readonly path: { readonly region: string }; readonly request: HttpServerRequest.HttpServerRequest }) =>
  Effect.flatMap(caller, ({ principal, requestId }) =>
    respond(endpoint.provider, serveRequest(principal, path.region, NodeHttpServerRequest.toIncomingMessage(request), requestId, maxBodyBytes)))

/** The caller and the request id (which every forwarded request is recorded with). */
const caller = Effect.all({
  principal: CurrentPrincipal,
  requestId: FiberRef.get(currentRequestId)
})
