// The request life cycle shared by every simulated endpoint: controls, auth, latency, faults, then the answer
// delivered as JSON or as a stream of server-sent events.
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Duration, Effect, Either, Option, Redacted, Stream } from "effect"
import { Readable } from "node:stream"
import { gzipSync } from "node:zlib"
import { type FaultKind, readControls, type SimulationControls } from "./controls"
import { hexDigest } from "./deterministic"
import type { Dialect } from "./dialect"
import { FaultLedger } from "./faultLedger"
import { parseJsonObject } from "./requestBody"
import { SimulatorSettings, type SimulatorSettingsShape } from "./settings"
import { type ErrorKind, SimulatorError } from "./simulatorError"

export type Reply =
  | { readonly _tag: "Json"; readonly body: unknown }
  | { readonly _tag: "Events"; readonly events: ReadonlyArray<string> }

export const jsonReply = (body: unknown): Reply => ({ _tag: "Json", body })
export const eventsReply = (events: ReadonlyArray<string>): Reply => ({ _tag: "Events", events })

export interface AnswerContext {
  readonly controls: SimulationControls
  readonly header: (name: string) => string | undefined
}

export interface SimulatedEndpoint<R> {
  readonly dialect: Dialect
  /** Builds the answer to a request body that parsed as a JSON object. */
  readonly answer: (body: Record<string, unknown>, context: AnswerContext) => Effect.Effect<Reply, SimulatorError, R>
}

const retryHeaders = (retryAfterMs: number): Record<string, string> => ({
  "retry-after": String(Math.ceil(retryAfterMs / 1000)),
  "retry-after-ms": String(retryAfterMs)
})

export const errorResponse = (dialect: Dialect, error: SimulatorError, requestId: string, retryAfterMs: number, status?: number) =>
  HttpServerResponse.unsafeJson(dialect.errorBody(error, requestId), {
    status: status ?? dialect.errorStatus(error.kind),
    headers: {
      [dialect.requestIdHeader]: requestId,
      ...(error.kind === "rate_limit" || error.kind === "overloaded" ? retryHeaders(retryAfterMs) : {})
    }
  })

/**
 * Ends the TCP connection without finishing the HTTP response, as a crashed or cut-off upstream does:
 * "reset" sends a TCP reset at once; "cut" first flushes what was written, so the client sees a truncated
 * body (after the status and headers at least: they are sent first when nothing was written yet).
 */
export const dropConnection = (request: HttpServerRequest.HttpServerRequest, how: "reset" | "cut"): Effect.Effect<never> =>
  Effect.sync(() => {
    const response = NodeHttpServerRequest.toServerResponse(request)
    const socket = response.socket
    if (socket === null) return response.destroy()
    if (how === "reset") return socket.resetAndDestroy()
    response.flushHeaders()
    socket.end()
  }).pipe(Effect.zipRight(Effect.never))

const faultErrors: Partial<Record<FaultKind, SimulatorError>> = {
  rate_limit: new SimulatorError({ kind: "rate_limit", message: "Rate limit reached (simulated). Please retry later." }),
  overloaded: new SimulatorError({ kind: "overloaded", message: "The server is currently overloaded (simulated)." }),
  server_error: new SimulatorError({ kind: "server_error", message: "The server had an error while processing your request (simulated)." }),
  unauthorized: new SimulatorError({ kind: "authentication", message: "Invalid API key (simulated)." }),
  content_filter: new SimulatorError({
    kind: "invalid_request",
    message: "The prompt was filtered by the content management policy (simulated).",
    path: ["prompt"],
    code: "content_filter"
  })
}

/** The error kind closest to an arbitrary status, for the body of a `status=NNN` control. */
const kindOfStatus = (status: number): ErrorKind =>
  status === 401
    ? "authentication"
    : status === 403
    ? "permission"
    : status === 404
    ? "not_found"
    : status === 413
    ? "request_too_large"
    : status === 422
    ? "unprocessable"
    : status === 429
    ? "rate_limit"
    : status === 503 || status === 529
    ? "overloaded"
    : status >= 500
    ? "server_error"
    : "invalid_request"

const streamFault = new SimulatorError({ kind: "server_error", message: "The stream was interrupted by a server error (simulated)." })

const proxyPage =
  "<!doctype html>\r\n<html><head><title>Sign in</title></head><body><form method=post><input name=user></form></body></html>\r\n"

const badGatewayPage =
  "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n"

/** Events a stream format can carry in-band when it breaks: an error event, or one that is cut short. */
interface InBandFaults {
  readonly error: string
  readonly malformed: string
}

/**
 * The answer's bytes, in pieces, paced by the chunk delay, with a mid-body fault after `faultAfter` pieces.
 * Without in-band events (a JSON body) an error fault simply drops the connection.
 */
const bodyStream = (
  pieces: ReadonlyArray<string>,
  controls: SimulationControls,
  fault: FaultKind | undefined,
  drop: Effect.Effect<never>,
  inBand?: InBandFaults
): Stream.Stream<Uint8Array> => {
  const encoder = new TextEncoder()
  const delay = Duration.millis(controls.chunkDelayMs)
  // Without a delay the pieces would reach the socket together anyway: one write instead of one per event.
  const paced = (items: ReadonlyArray<string>) =>
    controls.chunkDelayMs === 0
      ? items.length === 0
        ? Stream.empty
        : Stream.make(items.join(""))
      : Stream.fromIterable(items).pipe(
          Stream.zipWithIndex,
          Stream.mapEffect(([item, index]) => (index === 0 ? Effect.succeed(item) : Effect.as(Effect.sleep(delay), item)))
        )
  const rest = pieces.slice(controls.faultAfter)
  const tail = (): Stream.Stream<string> => {
    switch (fault) {
      case "mid_stream_error":
        return inBand === undefined ? Stream.fromEffect(drop) : Stream.concat(Stream.make(inBand.error), Stream.fromEffect(drop))
      case "mid_stream_abort":
        return Stream.fromEffect(drop)
      case "mid_event_abort": {
        // Half of the next piece (an event, or the rest of a JSON body), then the drop.
        const next = rest[0] ?? ""
        return Stream.concat(Stream.make(next.slice(0, Math.ceil(next.length / 2))), Stream.fromEffect(drop))
      }
      case "cut_after_headers":
        return Stream.fromEffect(drop)
      case "stall":
        return Stream.never
      case "malformed_body":
        return inBand === undefined ? paced(rest) : Stream.concat(Stream.make(inBand.malformed), paced(rest))
      default:
        return paced(rest)
    }
  }
  const before = fault === "cut_after_headers" ? [] : pieces.slice(0, controls.faultAfter)
  return Stream.concat(paced(before), Stream.suspend(tail)).pipe(
    Stream.map((text) => encoder.encode(text))
  )
}

/**
 * Events `delayMs` apart, the first at once, as a plain Node stream with one timer an event: an Effect Stream with a
 * sleep an event cost the simulator ~0.1 ms an event, more than a core for a thousand streams at 20 events a second
 * (bench:streams). A destroyed stream (the client gone) clears its timer.
 */
const pacedEvents = (events: ReadonlyArray<string>, delayMs: number): Readable => {
  let timer: NodeJS.Timeout | undefined
  let next = 0
  const readable = new Readable({
    read() {},
    destroy(error, callback) {
      clearTimeout(timer)
      callback(error)
    }
  })
  const emit = () => {
    readable.push(events[next++])
    if (next < events.length) timer = setTimeout(emit, delayMs)
    else readable.push(null)
  }
  if (events.length === 0) readable.push(null)
  else emit()
  return readable
}

/** The whole answer gzip-encoded, unasked (the upstream clients send no accept-encoding). */
const gzipped = (reply: Reply, headers: Record<string, string>): HttpServerResponse.HttpServerResponse => {
  const events = reply._tag === "Events"
  return HttpServerResponse.uint8Array(gzipSync(events ? reply.events.join("") : JSON.stringify(reply.body)), {
    contentType: events ? "text/event-stream; charset=utf-8" : "application/json",
    headers: { ...headers, "content-encoding": "gzip" }
  })
}

const deliver = (
  dialect: Dialect,
  reply: Reply,
  controls: SimulationControls,
  fault: FaultKind | undefined,
  headers: Record<string, string>,
  drop: Effect.Effect<never>
): HttpServerResponse.HttpServerResponse => {
  if (fault === "gzip") return gzipped(reply, headers)
  if (reply._tag === "Events") {
    const streamHeaders = { ...headers, "cache-control": "no-cache", "x-accel-buffering": "no" }
    // Nothing to pace and nothing to break: the whole stream in one write, without a Stream body's cost.
    if (controls.chunkDelayMs === 0 && fault === undefined) {
      return HttpServerResponse.text(reply.events.join(""), { contentType: "text/event-stream; charset=utf-8", headers: streamHeaders })
    }
    if (fault === undefined) {
      return HttpServerResponse.raw(pacedEvents(reply.events, controls.chunkDelayMs), {
        contentType: "text/event-stream; charset=utf-8",
        headers: streamHeaders
      })
    }
    const inBand = { error: dialect.streamError(streamFault), malformed: dialect.malformedEvent }
    return HttpServerResponse.stream(bodyStream(reply.events, controls, fault, drop, inBand), {
      contentType: "text/event-stream; charset=utf-8",
      headers: streamHeaders
    })
  }
  const text = JSON.stringify(reply.body)
  const half = Math.floor(text.length / 2)
  if (fault === undefined) {
    return HttpServerResponse.text(text, { contentType: "application/json", headers })
  }
  if (fault === "malformed_body") {
    return HttpServerResponse.text(text.slice(0, half), { contentType: "application/json", headers })
  }
  // A JSON body cut in the middle: the announced length is never reached.
  return HttpServerResponse.stream(bodyStream([text.slice(0, half), text.slice(half)], { ...controls, faultAfter: 1 }, fault, drop), {
    contentType: "application/json",
    contentLength: Buffer.byteLength(text),
    headers
  })
}

/** Bearer token or x-api-key: both carry the key. */
const credentialOf = (header: (name: string) => string | undefined): string | undefined => {
  const bearer = /^Bearer\s+(.+)$/i.exec(header("authorization") ?? "")?.[1]?.trim()
  return bearer ?? header("x-api-key")
}

/**
 * Why the request's credential is refused, if it is: none given while keys are checked, a key the simulator
 * was not told about (SIMULATOR_API_KEY, SIMULATOR_ACCEPTED_KEYS), or another key than the one the request
 * expects (the expect_key control).
 */
export const credentialRefusal = (
  settings: SimulatorSettingsShape,
  dialect: Dialect,
  header: (name: string) => string | undefined,
  expectKey: string | undefined
): SimulatorError | undefined => {
  const accepted = [...Option.toArray(settings.apiKey), ...settings.acceptedKeys].map(Redacted.value)
  if (accepted.length === 0 && expectKey === undefined) return undefined
  const credential = (dialect.credential ?? credentialOf)(header)
  if (credential === undefined || credential.length === 0) return dialect.missingKey
  if (accepted.length > 0 && !accepted.includes(credential)) return dialect.wrongKey
  if (expectKey !== undefined && !hexDigest([credential], 64).startsWith(expectKey)) return dialect.wrongKey
  return undefined
}

/** Serves one simulated endpoint: the handler given to the router. */
export const serveEndpoint = <R>(endpoint: SimulatedEndpoint<R>) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const settings = yield* SimulatorSettings
    const ledger = yield* FaultLedger
    const { dialect } = endpoint
    const requestId = yield* dialect.newRequestId
    const header = (name: string) => request.headers[name]
    const fail = (error: SimulatorError, retryAfterMs = settings.retryAfterMs) =>
      errorResponse(dialect, error, requestId, retryAfterMs)

    const rawBody = yield* Effect.either(request.text)
    if (Either.isLeft(rawBody)) {
      return fail(new SimulatorError({ kind: "invalid_request", message: "The request body could not be read." }))
    }
    const controls = readControls(settings, { path: request.url, header, rawBody: rawBody.right })
    if (Either.isLeft(controls)) {
      return fail(new SimulatorError({ kind: "invalid_request", message: controls.left, code: "invalid_simulator_control" }))
    }
    const control = controls.right

    const refusal = credentialRefusal(settings, dialect, header, control.expectKey)
    if (refusal !== undefined) return fail(refusal)

    if (control.latencyMs > 0) yield* Effect.sleep(Duration.millis(control.latencyMs))

    const fault =
      control.fault !== undefined && (yield* ledger.attemptFails(control.faultKey, control.faultTimes)) ? control.fault : undefined
    if (control.status !== undefined && (yield* ledger.attemptFails(control.faultKey, control.faultTimes))) {
      const kind = kindOfStatus(control.status)
      return errorResponse(dialect, new SimulatorError({ kind, message: `Simulated status ${control.status}.` }), requestId, control.retryAfterMs, control.status)
    }
    const faultError = fault === undefined ? undefined : faultErrors[fault]
    if (faultError !== undefined) return fail(faultError, control.retryAfterMs)
    if (fault === "bad_gateway") {
      return HttpServerResponse.text(badGatewayPage, { status: 502, contentType: "text/html" })
    }
    if (fault === "html_page") return HttpServerResponse.text(proxyPage, { status: 200, contentType: "text/html" })
    if (fault === "reset") return yield* dropConnection(request, "reset")
    if (fault === "hang") return yield* Effect.never

    const answer = yield* parseJsonObject(rawBody.right).pipe(
      // A server that ignores `stream` answers with the whole JSON answer.
      Effect.map((body) => {
        if (fault !== "ignore_stream") return body
        const { stream: _stream, stream_options: _options, ...whole } = body
        return whole
      }),
      Effect.flatMap((body) => endpoint.answer(body, { controls: control, header })),
      Effect.either
    )
    return Either.isLeft(answer)
      ? fail(answer.left)
      : deliver(
        dialect,
        answer.right,
        control,
        fault === "ignore_stream" ? undefined : fault,
        { [dialect.requestIdHeader]: requestId },
        dropConnection(request, "cut")
      )
  })
