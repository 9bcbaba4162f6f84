// Bedrock's InvokeModel for provider_b's models: `POST /model/{modelId}/invoke`, `/invoke-with-response-stream`
// and `/count-tokens`, SigV4-checked, with Bedrock's body rules (no `model` or `stream`, `anthropic_version`
// in the body), answered by the messages simulation: JSON as the messages API's, streams as event-stream frames.
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Duration, Effect, Either, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { type FaultKind, readControls, type SimulationControls } from "../../controls"
import { dropConnection, type Reply } from "../../endpoint"
import { FaultLedger } from "../../faultLedger"
import { countTokensEndpoint } from "../../providerB/countTokens"
import { messagesEndpoint } from "../../providerB/messages"
import { knownCountTokensFields } from "../../providerB/messagesRequest"
import { parseJsonObject } from "../../requestBody"
import { SimulatorSettings } from "../../settings"
import { dottedPath, type SimulatorError } from "../../simulatorError"
import { sseDecoder } from "../../../domain/sse"
import { type BedrockException, bedrockException, exceptionOfKind, exceptionOfStatus, exceptionResponse } from "./errors"
import { chunkFrame, exceptionFrame } from "./eventStream"
import { signatureRefusal } from "./sigv4"

export type BedrockOperation = "invoke" | "invoke-with-response-stream" | "count-tokens"

/** The only version Bedrock documents for these models. */
export const bedrockMessagesVersion = "bedrock-2023-05-31"

/**
 * The simulated model behind a Bedrock model id: a base id `provider_b.<model>-v1:0`, or an inference profile
 * with its geography first (`eu.provider_b.<model>-v1:0`). Undefined when the id has neither shape.
 */
export const simulatedModelOf = (modelId: string): string | undefined =>
  /^(?:(?:eu|us|apac|jp|au|ca|us-gov|global)\.)?provider_b\.(.+?)-v\d+(?::\d+)?$/.exec(modelId)?.[1]

const validation = (message: string) => bedrockException("ValidationException", 400, message)

const faultExceptions: Partial<Record<FaultKind, BedrockException>> = {
  rate_limit: bedrockException("ThrottlingException", 429, "Too many requests, please wait before trying again. (simulated)"),
  overloaded: bedrockException("ServiceUnavailableException", 503, "Bedrock is unable to process your request. (simulated)"),
  server_error: bedrockException("InternalServerException", 500, "The server encountered an internal error. (simulated)"),
  unauthorized: bedrockException("UnrecognizedClientException", 403, "The security token included in the request is invalid. (simulated)")
}

const streamFault = bedrockException("InternalServerException", 500, "The stream was interrupted by a server error (simulated).")

const badGatewayPage = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center><h1>502 Bad Gateway</h1></center></body>\r\n</html>\r\n"

const exceptionOfError = (error: SimulatorError): BedrockException =>
  exceptionOfKind(error.kind, error.path === undefined || error.path.length === 0 ? error.message : `${dottedPath(error.path)}: ${error.message}`)

/** Bedrock's own body rules, then the body the messages simulation takes (the model from the path). */
const messagesBody = (body: Record<string, unknown>, model: string, operation: BedrockOperation): Either.Either<Record<string, unknown>, BedrockException> => {
  for (const key of ["model", "stream"]) {
    if (key in body) return Either.left(validation(`Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`))
  }
  const { anthropic_beta: betas, anthropic_version: version, ...rest } = body
  if (version === undefined) {
    return Either.left(validation("Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again."))
  }
  if (version !== bedrockMessagesVersion) return Either.left(validation(`Invalid API version: ${String(version)}. Expected ${bedrockMessagesVersion}.`))
  if (betas !== undefined && !(Array.isArray(betas) && betas.every((beta) => typeof beta === "string"))) {
    return Either.left(validation("Malformed input request: #/anthropic_beta: expected type: JSONArray of strings, please reformat your input and try again."))
  }
  return Either.right({ ...rest, model, ...(operation === "invoke-with-response-stream" ? { stream: true } : {}) })
}

/** CountTokens wraps the InvokeModel body, as a string: `{ input: { invokeModel: { body } } }`. */
const countTokensBody = (body: Record<string, unknown>): Either.Either<Record<string, unknown>, BedrockException> => {
  const input = body.input as { readonly invokeModel?: { readonly body?: unknown } } | undefined
  const inner = input?.invokeModel?.body
  if (typeof inner !== "string") return Either.left(validation("Malformed input request: #/input: required key [invokeModel.body] not found."))
  return parseJsonObject(inner).pipe(Either.mapLeft((error) => validation(`input.invokeModel.body: ${error.message}`)))
}

/** The messages events as frames, the last one carrying Bedrock's invocation metrics. */
const framesOf = (reply: Reply & { readonly _tag: "Events" }, controls: SimulationControls): ReadonlyArray<Uint8Array> => {
  const events = sseDecoder().feed(new TextEncoder().encode(reply.events.join("")))
  let inputTokenCount = 0
  let outputTokenCount = 0
  return events.map(({ data }) => {
    const event = JSON.parse(data) as {
      readonly type?: string
      readonly message?: { readonly usage?: { readonly input_tokens?: number } }
      readonly usage?: { readonly output_tokens?: number }
    }
    if (event.type === "message_start") inputTokenCount = event.message?.usage?.input_tokens ?? 0
    if (event.type === "message_delta") outputTokenCount = event.usage?.output_tokens ?? 0
    if (event.type !== "message_stop") return chunkFrame(data)
    const invocationLatency = controls.latencyMs + controls.chunkDelayMs * Math.max(0, events.length - 1)
    return chunkFrame(
      JSON.stringify({
        ...event,
        "amazon-bedrock-invocationMetrics": { inputTokenCount, outputTokenCount, invocationLatency, firstByteLatency: controls.latencyMs }
      })
    )
  })
}

/** A frame whose CRC does not match: what a broken stream looks like to a decoder. */
const corrupted = (frame: Uint8Array): Uint8Array => {
  const copy = Uint8Array.from(frame)
  copy[copy.length - 1] = (copy[copy.length - 1] ?? 0) ^ 0xff
  return copy
}

const concat = (frames: ReadonlyArray<Uint8Array>): Uint8Array => Buffer.concat(frames.map((frame) => Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength)))

/** The frames paced by the chunk delay, broken after `faultAfter` frames as the fault says. */
const frameStream = (
  frames: ReadonlyArray<Uint8Array>,
  controls: SimulationControls,
  fault: FaultKind | undefined,
  drop: Effect.Effect<never>
): Stream.Stream<Uint8Array> => {
  const delay = Duration.millis(controls.chunkDelayMs)
  const paced = (items: ReadonlyArray<Uint8Array>) =>
    Stream.fromIterable(items).pipe(
      Stream.zipWithIndex,
      Stream.mapEffect(([item, index]) => (index === 0 || controls.chunkDelayMs === 0 ? Effect.succeed(item) : Effect.as(Effect.sleep(delay), item)))
    )
  const before = fault === "cut_after_headers" ? [] : frames.slice(0, controls.faultAfter)
  const rest = frames.slice(controls.faultAfter)
  const tail = (): Stream.Stream<Uint8Array> => {
    switch (fault) {
      case "mid_stream_error":
        return Stream.concat(Stream.make(exceptionFrame(streamFault)), Stream.fromEffect(drop))
      case "mid_stream_abort":
      case "cut_after_headers":
        return Stream.fromEffect(drop)
      case "mid_event_abort": {
        const next = rest[0] ?? new Uint8Array()
        return Stream.concat(Stream.make(next.subarray(0, Math.ceil(next.length / 2))), Stream.fromEffect(drop))
      }
      case "stall":
        return Stream.never
      case "malformed_body":
        return rest.length === 0 ? Stream.empty : Stream.concat(Stream.make(corrupted(rest[0] ?? new Uint8Array())), paced(rest.slice(1)))
      default:
        return paced(rest)
    }
  }
  return Stream.concat(paced(before), Stream.suspend(tail))
}

const deliver = (reply: Reply, controls: SimulationControls, fault: FaultKind | undefined, requestId: string, drop: Effect.Effect<never>) => {
  if (reply._tag === "Events") {
    const frames = framesOf(reply, controls)
    const options = {
      contentType: "application/vnd.amazon.eventstream",
      headers: { "x-amzn-requestid": requestId, "x-amzn-bedrock-content-type": "application/json" }
    }
    return controls.chunkDelayMs === 0 && fault === undefined
      ? HttpServerResponse.uint8Array(concat(frames), options)
      : HttpServerResponse.stream(frameStream(frames, controls, fault, drop), options)
  }
  const body = reply.body as { readonly usage?: { readonly input_tokens?: number; readonly output_tokens?: number } }
  const headers = {
    "x-amzn-requestid": requestId,
    ...(body.usage === undefined
      ? {}
      : {
        "x-amzn-bedrock-input-token-count": String(body.usage.input_tokens ?? 0),
        "x-amzn-bedrock-output-token-count": String(body.usage.output_tokens ?? 0),
        "x-amzn-bedrock-invocation-latency": String(controls.latencyMs)
      })
  }
  const text = JSON.stringify(reply.body)
  return fault === "malformed_body"
    ? HttpServerResponse.text(text.slice(0, Math.floor(text.length / 2)), { contentType: "application/json", headers })
    : HttpServerResponse.text(text, { contentType: "application/json", headers })
}

const pathRegex = /^\/model\/([^/?]+)\/(?:invoke|invoke-with-response-stream|count-tokens)(?:\?|$)/

/** Serves one Bedrock operation: the handler given to the router. */
export const serveBedrock = (operation: BedrockOperation) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const settings = yield* SimulatorSettings
    const ledger = yield* FaultLedger
    const requestId = randomUUID()
    const fail = (exception: BedrockException) => exceptionResponse(exception, requestId)
    const header = (name: string) => request.headers[name]

    const rawBody = yield* Effect.either(request.text)
    if (Either.isLeft(rawBody)) return fail(validation("The request body could not be read."))
    const refusal = yield* signatureRefusal(
      { method: request.method, url: request.url, header, body: rawBody.right },
      settings.aws,
      yield* Clock.currentTimeMillis
    )
    if (refusal !== undefined) return fail(refusal)

    const controls = readControls(settings, { path: request.url, header, rawBody: rawBody.right })
    if (Either.isLeft(controls)) return fail(validation(controls.left))
    const control = controls.right
    if (control.latencyMs > 0) yield* Effect.sleep(Duration.millis(control.latencyMs))

    const fault =
      control.fault !== undefined && (yield* ledger.attemptFails(control.faultKey, control.faultTimes)) ? control.fault : undefined
    if (control.status !== undefined && (yield* ledger.attemptFails(control.faultKey, control.faultTimes))) {
      return fail(exceptionOfStatus(control.status))
    }
    const faultException = fault === undefined ? undefined : faultExceptions[fault]
    if (faultException !== undefined) return fail(faultException)
    if (fault === "bad_gateway") return HttpServerResponse.text(badGatewayPage, { status: 502, contentType: "text/html" })
    if (fault === "html_page") return HttpServerResponse.text("<!doctype html><html><body>Sign in</body></html>", { contentType: "text/html" })
    if (fault === "reset") return yield* dropConnection(request, "reset")
    if (fault === "hang") return yield* Effect.never

    const encodedId = pathRegex.exec(request.url)?.[1] ?? ""
    const modelId = Either.getOrElse(Either.try(() => decodeURIComponent(encodedId)), () => encodedId)
    const model = simulatedModelOf(modelId)
    if (model === undefined) return fail(validation("The provided model identifier is invalid."))

    const parsed = parseJsonObject(rawBody.right).pipe(Either.mapLeft((error) => validation(`Malformed input request: ${error.message}`)))
    const invokeBody = operation === "count-tokens" ? Either.flatMap(parsed, countTokensBody) : parsed
    const body = Either.flatMap(invokeBody, (invoke) => messagesBody(invoke, model, operation))
    if (Either.isLeft(body)) return fail(body.left)
    // The messages simulation asks for the version header the provider's own API requires.
    const context = { controls: control, header: (name: string) => (name === "anthropic-version" ? "2023-06-01" : header(name)) }
    if (operation === "count-tokens") {
      const counted = Object.fromEntries(Object.entries(body.right).filter(([key]) => knownCountTokensFields.has(key)))
      const answer = yield* Effect.either(countTokensEndpoint.answer(counted, context))
      if (Either.isLeft(answer)) return fail(exceptionOfError(answer.left))
      const tokens = answer.right._tag === "Json" ? (answer.right.body as { readonly input_tokens?: number }).input_tokens : undefined
      return HttpServerResponse.unsafeJson({ inputTokens: tokens ?? 0 }, { headers: { "x-amzn-requestid": requestId } })
    }
    const answer = yield* Effect.either(messagesEndpoint.answer(body.right, context))
    if (Either.isLeft(answer)) return fail(exceptionOfError(answer.left))
    return deliver(answer.right, control, fault === "ignore_stream" || fault === "gzip" ? undefined : fault, requestId, dropConnection(request, "cut"))
  })
