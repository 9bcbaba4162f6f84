// provider_b on AWS Bedrock (InvokeModel): the model in the path, the body without `model` and `stream` and with
// Bedrock's `anthropic_version`, SigV4-signed with AWS's own signer; its binary event stream read back as the
// messages API's SSE events, its `x-amzn-ErrorType` errors as the messages API's errors.
import { EventStreamCodec } from "@smithy/eventstream-codec"
import { Hash } from "@smithy/hash-node"
import { SignatureV4 } from "@smithy/signature-v4"
import { fromUtf8, toUtf8 } from "@smithy/util-utf8"
import { Effect, Redacted } from "effect"
import type { BedrockDeployment } from "../../../domain/deployments"
import type { SseEvent } from "../../../domain/sse"
import { isRecord, parseJson } from "../../../providers/protocol"
import { providerBErrorType } from "../../../providers/providerB/protocol"
import { UpstreamFailure } from "../UpstreamClient"
import type { ErrorAnswer, PreparedCall, StreamDecoder, UpstreamCall, UpstreamKind } from "./UpstreamKind"

/** The only `anthropic_version` Bedrock documents for the messages models. */
export const bedrockMessagesVersion = "bedrock-2023-05-31"

export const eventStreamContentType = "application/vnd.amazon.eventstream"

/** Sent as the client sent them, but never signed: a proxy on the way may rewrite them. */
const traceHeaders = new Set(["traceparent", "tracestate", "baggage"])

/** Headers of the messages API that Bedrock takes in the body (or not at all). */
const bodyHeaders = new Set(["anthropic-version", "anthropic-beta"])

/**
 * A model id as a path segment, encoded as the official Bedrock client encodes it (`:` left as it is): the path
 * sent and the path signed are this same string.
 */
export const encodeModelId = (id: string): string => id.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@]+/g, encodeURIComponent)

const invokeBody = (call: UpstreamCall): Record<string, unknown> => {
  const { model: _model, stream: _stream, ...rest } = call.body
  const header = Object.entries(call.headers).find(([name]) => name.toLowerCase() === "anthropic-beta")?.[1]
  const betas = (header ?? "").split(",").map((beta) => beta.trim()).filter((beta) => beta !== "")
  return { ...rest, anthropic_version: bedrockMessagesVersion, ...(betas.length > 0 ? { anthropic_beta: betas } : {}) }
}

/** The operation's path and body: InvokeModel, its stream, or CountTokens (which wraps an InvokeModel body). */
const addressed = (call: UpstreamCall): { readonly action: string; readonly body: Record<string, unknown> } | undefined => {
  switch (call.operation) {
    case "messages":
      return { action: call.stream ? "invoke-with-response-stream" : "invoke", body: invokeBody(call) }
    case "count_tokens": {
      // The wrapped body must be a whole InvokeModel body, which has max_tokens; a token count has none.
      const body = invokeBody(call)
      return { action: "count-tokens", body: { input: { invokeModel: { body: JSON.stringify({ max_tokens: 1, ...body }) } } } }
    }
    default:
      return undefined
  }
}

interface Credentials {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken?: string
}

const prepareWith = (chain: () => Promise<Credentials>) => (deployment: BedrockDeployment, call: UpstreamCall): Effect.Effect<PreparedCall, UpstreamFailure> =>
  Effect.gen(function* () {
    const target = addressed(call)
    if (target === undefined) {
      return yield* new UpstreamFailure({ kind: "unreachable", detail: `a bedrock deployment does not serve ${call.operation}` })
    }
    const credentials: Credentials = deployment.credentials._tag === "Static"
      ? {
        accessKeyId: deployment.credentials.accessKeyId,
        secretAccessKey: Redacted.value(deployment.credentials.secretAccessKey),
        ...(deployment.credentials.sessionToken === undefined ? {} : { sessionToken: Redacted.value(deployment.credentials.sessionToken) })
      }
      : yield* Effect.tryPromise({
        try: chain,
        catch: (cause) =>
          new UpstreamFailure({
            kind: "unreachable",
            detail: `AWS credentials of deployment ${deployment.name} not found in the standard chain: ${cause instanceof Error ? cause.message : String(cause)}`
          })
      })
    const url = new URL(`${deployment.url}/model/${encodeModelId(call.upstreamModel)}/${target.action}`)
    const body = JSON.stringify(target.body)
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: call.stream && call.operation === "messages" ? eventStreamContentType : "application/json"
    }
    for (const [name, value] of Object.entries(call.headers)) {
      if (!bodyHeaders.has(name.toLowerCase())) headers[name.toLowerCase()] = value
    }
    const signer = new SignatureV4({ service: "bedrock", region: deployment.awsRegion, credentials, sha256: Hash.bind(null, "sha256") })
    const signed = yield* Effect.tryPromise({
      try: () =>
        signer.sign(
          { method: "POST", protocol: url.protocol, hostname: url.hostname, path: url.pathname, query: {}, headers: { ...headers, host: url.host }, body },
          { unsignableHeaders: traceHeaders }
        ),
      catch: (cause) => new UpstreamFailure({ kind: "unreachable", detail: `SigV4 signing failed: ${cause instanceof Error ? cause.message : String(cause)}` })
    })
    // Host is signed, but sent by the HTTP client itself from the URL (the same value).
    const { host: _host, ...sent } = signed.headers
    return { url: url.href, method: "POST", headers: sent, body }
  })

/** The messages API's in-band error type of a stream's exception frame (`:exception-type`). */
const streamErrorTypes: ReadonlyMap<string, string> = new Map([
  ["throttlingException", "rate_limit_error"],
  ["modelNotReadyException", "rate_limit_error"],
  ["serviceUnavailableException", "overloaded_error"],
  ["validationException", "invalid_request_error"],
  ["accessDeniedException", "permission_error"],
  ["resourceNotFoundException", "not_found_error"],
  ["modelTimeoutException", "timeout_error"]
])

const errorEvent = (type: string, message: string): SseEvent => ({
  event: "error",
  data: JSON.stringify({ type: "error", error: { type, message } })
})

const stringHeader = (headers: Record<string, { readonly type: string; readonly value: unknown }>, name: string): string | undefined => {
  const header = headers[name]
  return header?.type === "string" && typeof header.value === "string" ? header.value : undefined
}

/** The messages event one decoded frame carries; undefined for a frame that does not read. */
const eventOfFrame = (message: ReturnType<EventStreamCodec["decode"]>): SseEvent | "skip" | undefined => {
  const type = stringHeader(message.headers, ":message-type")
  const payload = toUtf8(message.body)
  if (type === "exception") {
    const exception = stringHeader(message.headers, ":exception-type") ?? "internalServerException"
    const parsed = parseJson(payload)
    const text = isRecord(parsed) && typeof parsed.message === "string" ? parsed.message : `The upstream stream failed (${exception}).`
    return errorEvent(streamErrorTypes.get(exception) ?? "api_error", text)
  }
  if (type === "error") {
    return errorEvent("api_error", stringHeader(message.headers, ":error-message") ?? stringHeader(message.headers, ":error-code") ?? "The upstream stream failed.")
  }
  if (type !== "event" || stringHeader(message.headers, ":event-type") !== "chunk") return "skip"
  const chunk = parseJson(payload)
  if (!isRecord(chunk) || typeof chunk.bytes !== "string") return undefined
  const json = Buffer.from(chunk.bytes, "base64").toString("utf8")
  const event = parseJson(json)
  if (!isRecord(event) || typeof event.type !== "string") return undefined
  if (!("amazon-bedrock-invocationMetrics" in event)) return { event: event.type, data: json }
  // Bedrock's own addition to the last event: the messages API's message_stop has none.
  const { "amazon-bedrock-invocationMetrics": _metrics, ...own } = event
  return { event: event.type, data: JSON.stringify(own) }
}

/** The bytes of a frame's prelude, its headers-length word and its two CRCs: what a frame holds beside its payload. */
const frameOverhead = 16

/**
 * Frames decoded as they complete, whatever the chunk boundaries. A frame announcing more than a bounded event
 * needs (its payload is the event in base64, 4/3 of its size, in a small JSON object, with a few headers) is
 * refused from its prelude, before it is buffered.
 */
export const bedrockStreamDecoder = (maxEventBytes: number): StreamDecoder => {
  const codec = new EventStreamCodec(toUtf8, fromUtf8)
  const maxFrameBytes = Math.ceil((maxEventBytes * 4) / 3) + frameOverhead + 512
  let buffered: Uint8Array = new Uint8Array(0)
  return {
    feed: (bytes) => {
      buffered = buffered.length === 0 ? bytes : Buffer.concat([buffered, bytes])
      const events: Array<SseEvent> = []
      while (buffered.length >= 4) {
        const total = new DataView(buffered.buffer, buffered.byteOffset, buffered.byteLength).getUint32(0)
        if (total < frameOverhead || total > maxFrameBytes) return undefined
        if (buffered.length < total) break
        const frame = buffered.subarray(0, total)
        buffered = buffered.subarray(total)
        const event = (() => {
          try {
            return eventOfFrame(codec.decode(frame))
          } catch {
            // A CRC that does not match, headers that do not parse.
            return undefined
          }
        })()
        if (event === undefined) return undefined
        if (event !== "skip") events.push(event)
      }
      return events
    }
  }
}

/** Bedrock's exceptions as the messages API answers the same: its status and error type. */
const errorsByName: ReadonlyMap<string, readonly [number, string]> = new Map([
  ["ThrottlingException", [429, "rate_limit_error"]],
  ["ModelNotReadyException", [429, "rate_limit_error"]],
  ["ValidationException", [400, "invalid_request_error"]],
  ["AccessDeniedException", [403, "permission_error"]],
  ["ResourceNotFoundException", [404, "not_found_error"]],
  ["ServiceUnavailableException", [529, "overloaded_error"]],
  ["ModelTimeoutException", [504, "timeout_error"]],
  ["ModelErrorException", [500, "api_error"]],
  ["ModelStreamErrorException", [500, "api_error"]],
  ["InternalServerException", [500, "api_error"]]
] as const)

const headerOf = (headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>, name: string): string | undefined => {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return typeof value === "string" ? value : value?.[0]
  }
  return undefined
}

export const bedrockErrorAnswer = (
  status: number,
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
  body: string
): ErrorAnswer => {
  const parsed = parseJson(body)
  // Already the messages format (a gateway or proxy in front of Bedrock that speaks it): as it is.
  if (isRecord(parsed) && parsed.type === "error" && isRecord(parsed.error)) return { status, body }
  // `ThrottlingException:http://internal.amazon.com/coral/…`: the name is before the colon.
  const name = headerOf(headers, "x-amzn-errortype")?.split(":")[0]
  const known = name === undefined ? undefined : errorsByName.get(name)
  const [answered, type] = known ?? (name === undefined || status < 500 ? [status, providerBErrorType(status)] : [500, "api_error"])
  const said = isRecord(parsed) ? (typeof parsed.message === "string" ? parsed.message : parsed.Message) : undefined
  const message = typeof said === "string" ? said : `The upstream answered status ${status}${name === undefined ? "" : ` (${name})`}.`
  return { status: answered, body: JSON.stringify({ type: "error", error: { type, message } }) }
}

/** CountTokens answers `{ inputTokens }`; the messages API `{ input_tokens }`. */
const bedrockJsonAnswer = (body: string, call: UpstreamCall): string => {
  if (call.operation !== "count_tokens") return body
  const parsed = parseJson(body)
  return isRecord(parsed) && typeof parsed.inputTokens === "number" ? JSON.stringify({ input_tokens: parsed.inputTokens }) : body
}

/**
 * The Bedrock kind. The standard AWS credential chain is made once, at the first call of a deployment without
 * static keys, and resolved then; the provider caches what it found until it expires. Its code (the SDK's SSO,
 * STS and metadata clients, ~0.5 MB of script) is imported then too: a service with no such deployment never
 * holds it (bench/RESULTS.md, "Footprint").
 */
export const makeBedrockKind: Effect.Effect<UpstreamKind<BedrockDeployment>> = Effect.sync(() => {
  let made: Promise<() => Promise<Credentials>> | undefined
  const chain = () =>
    (made ??= import("./awsCredentialChain").then(
      (module) => module.makeCredentialChain(),
      (error: unknown) => {
        // Tried again by the next call.
        made = undefined
        throw error
      }
    )).then((provider) => provider())
  return {
    kind: "bedrock",
    secrets: (deployment) =>
      deployment.credentials._tag === "Static"
        ? [deployment.credentials.accessKeyId, Redacted.value(deployment.credentials.secretAccessKey), ...(deployment.credentials.sessionToken === undefined ? [] : [Redacted.value(deployment.credentials.sessionToken)])]
        : [],
    prepare: prepareWith(chain),
    streamContentType: eventStreamContentType,
    streamDecoder: bedrockStreamDecoder,
    errorAnswer: bedrockErrorAnswer,
    jsonAnswer: bedrockJsonAnswer
  }
})
