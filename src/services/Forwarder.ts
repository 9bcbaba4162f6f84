import { Chunk, Context, Data, Effect, Exit, Layer, Option, Stream } from "effect"
import { answerableStatus } from "../api/errors/statusVariants"
import type { Problem } from "../domain/problem"
import { billedOutputTokens, emptyTally, parseJson, type Protocol } from "../domain/protocols/protocol"
import { decodeSse, encodeSseEvent, type SseEvent } from "../domain/sse"
import type { LimitFamily } from "../domain/workspaceSettings"
import type { Principal } from "./AuthService"
import { Prices } from "./Prices"
import { type Admission, RateLimits } from "./RateLimits"
import { UpstreamClient, UpstreamFailure, type UpstreamResponse } from "./UpstreamClient"
import { type ApiRequestRecord, UsageRecorder } from "./UsageRecorder"
import { type Provider, type UpstreamTarget, Upstreams } from "./Upstreams"

/** A request refused or failed before the first byte: rendered as the endpoint's error, with these headers. */
export class ForwardFailure extends Data.TaggedError("ForwardFailure")<{
  readonly problem: Problem
  readonly headers: Readonly<Record<string, string>>
}> {}

/** A stream that failed after its first byte: the protocol's in-band error, after which the connection is cut. */
export class StreamBroken extends Data.TaggedError("StreamBroken")<{ readonly inBandError: string }> {}

export type Forwarded =
  | { readonly _tag: "Json"; readonly body: Uint8Array; readonly headers: Readonly<Record<string, string>> }
  | {
    readonly _tag: "Stream"
    readonly events: Stream.Stream<Uint8Array, StreamBroken>
    readonly headers: Readonly<Record<string, string>>
  }

export interface ForwardInput {
  readonly principal: Principal
  /** The rate-limit family the request counts in. */
  readonly family: LimitFamily
  /** Tokens reserved against the limits before forwarding: estimated input plus the most output allowed. */
  readonly reservedTokens: number
  readonly protocol: Protocol
  readonly provider: Provider
  readonly endpoint: ApiRequestRecord["endpoint"]
  readonly region: string
  readonly model: string
  /** Appended to the upstream's API root. */
  readonly path: string
  /** The validated request as it goes upstream. */
  readonly body: unknown
  readonly stream: boolean
  /** Protocol headers for the upstream (never the caller's). */
  readonly upstreamHeaders?: Readonly<Record<string, string>>
  /** Input tokens to bill if the upstream never reports them (a stream cut short). */
  readonly estimatedInputTokens: number
  /** What the client sees of each upstream event; undefined drops it. Default: the event unchanged. */
  readonly relayEvent?: (event: SseEvent) => SseEvent | undefined
  readonly requestId: string | undefined
}

/** Largest non-streamed upstream answer accepted; anything larger is a malformed answer. */
const maxJsonBytes = 64 * 1024 * 1024

/** Headers of the upstream's answer that clients act on (rate limits, retry hints). */
const passedHeaders = /^(retry-after|retry-after-ms|x-ratelimit-.*|anthropic-ratelimit-.*)$/i

const pickHeaders = (headers: UpstreamResponse["headers"]): Record<string, string> => {
  const picked: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (passedHeaders.test(name) && typeof value === "string") picked[name.toLowerCase()] = value
  }
  return picked
}

const failureProblem = (failure: UpstreamFailure): Problem =>
  failure.kind === "timeout"
    ? { status: 504, code: "upstream_timeout", message: "The upstream provider did not answer in time." }
    : failure.kind === "malformed"
    ? { status: 502, code: "upstream_malformed", message: "The upstream provider sent an answer that could not be read." }
    : { status: 502, code: "upstream_unavailable", message: "The upstream provider could not be reached." }

/**
 * Upstream refusals of the caller's request (4xx) pass through with their status and message. A
 * refusal of the service's own credentials, and every upstream 5xx but the protocol's own
 * (passedServerStatuses), is this service's failure: 502.
 */
const upstreamErrorProblem = (protocol: Protocol, status: number, body: string): Problem => {
  if (status === 401 || status === 403) {
    return { status: 502, code: "upstream_credentials", message: "The upstream provider refused this service's credentials." }
  }
  if ((status >= 400 && status < 500) || protocol.passedServerStatuses?.includes(status) === true) {
    return protocol.upstreamProblem(answerableStatus(status), body)
  }
  return { status: 502, code: "upstream_error", message: `The upstream provider failed (status ${status}).` }
}

const readAll = (body: Stream.Stream<Uint8Array, UpstreamFailure>) =>
  Stream.runFold(body, { chunks: [] as Array<Uint8Array>, size: 0 }, (acc, chunk) => {
    acc.chunks.push(chunk)
    acc.size += chunk.length
    return acc
  }).pipe(
    Effect.flatMap(({ chunks, size }) =>
      size > maxJsonBytes
        ? Effect.fail(new UpstreamFailure({ kind: "malformed", detail: `answer of ${size} bytes` }))
        : Effect.succeed(Buffer.concat(chunks, size))
    )
  )

const encoder = new TextEncoder()

/**
 * Sends a validated request upstream and relays the answer: JSON whole, streams event by event as
 * they arrive. Every forwarded request is recorded with its usage and cost — failed and cancelled
 * ones too — through the UsageRecorder, off the request path.
 */
export class Forwarder extends Context.Tag("Forwarder")<Forwarder, {
  readonly forward: (input: ForwardInput) => Effect.Effect<Forwarded, ForwardFailure>
}>() {
  static readonly layer = Layer.effect(
    Forwarder,
    Effect.gen(function*() {
      const upstreams = yield* Upstreams
      const client = yield* UpstreamClient
      const recorder = yield* UsageRecorder
      const prices = yield* Prices
      const rateLimits = yield* RateLimits

      const record = (
        input: ForwardInput,
        admission: Admission,
        started: number,
        result: { status: number; outcome: ApiRequestRecord["outcome"]; inputTokens: number; outputTokens: number }
      ) =>
        Effect.zipRight(admission.settle(result.inputTokens + result.outputTokens), recorder.record({
          workspaceId: input.principal.workspace.id,
          keyId: input.principal.keyId,
          endpoint: input.endpoint,
          provider: input.provider,
          region: input.region,
          model: input.model,
          status: result.status,
          outcome: result.outcome,
          stream: input.stream,
          inputTokens: result.inputTokens,
          outputTokens: result.outputTokens,
          costUsd: prices.cost(input.model, result),
          latencyMs: performance.now() - started,
          requestId: input.requestId,
          createdAt: new Date()
        }))

      const refuse = (
        input: ForwardInput,
        admission: Admission,
        started: number,
        problem: Problem,
        headers: Record<string, string> = {}
      ) =>
        Effect.zipRight(
          record(input, admission, started, { status: problem.status, outcome: "failed", inputTokens: 0, outputTokens: 0 }),
          Effect.fail(new ForwardFailure({ problem, headers: { ...admission.headers, ...headers } }))
        )

      const simulatedHeader = (target: UpstreamTarget): Record<string, string> =>
        target.simulated ? { "x-workspace-api-simulated": "true" } : {}

      const relayJson = (
        input: ForwardInput,
        admission: Admission,
        started: number,
        response: UpstreamResponse,
        headers: Record<string, string>
      ) =>
        readAll(response.body).pipe(
          Effect.flatMap((bytes) => {
            const usage = input.protocol.usageOfBody(parseJson(bytes.toString("utf8")))
            return usage === undefined
              ? Effect.fail(new UpstreamFailure({ kind: "malformed", detail: "answer is not valid JSON of the protocol" }))
              : Effect.as(
                record(input, admission, started, { status: 200, outcome: "completed", ...usage }),
                { _tag: "Json" as const, body: bytes, headers }
              )
          }),
          Effect.catchTag("UpstreamFailure", (failure) => refuse(input, admission, started, failureProblem(failure)))
        )

      const relayStream = (
        input: ForwardInput,
        admission: Admission,
        started: number,
        response: UpstreamResponse,
        headers: Record<string, string>
      ) => {
        const tally = emptyTally(input.estimatedInputTokens)
        let failedMidway = false
        // Events read with a bad one, before it: they still reach the client, ahead of the error.
        let unsent = ""
        const relay = input.relayEvent ?? ((event: SseEvent) => event)
        const events = decodeSse(response.body).pipe(
          Stream.mapChunksEffect((chunk) => {
            let text = ""
            for (const event of chunk) {
              if (!input.protocol.observe(event, tally)) {
                unsent = text
                return Effect.fail(new UpstreamFailure({ kind: "malformed", detail: "stream event not valid for the protocol" }))
              }
              const relayed = relay(event)
              if (relayed !== undefined) text += encodeSseEvent(relayed)
            }
            // One write per upstream chunk, however many events it held.
            return Effect.succeed(text === "" ? Chunk.empty<Uint8Array>() : Chunk.of(encoder.encode(text)))
          }),
          Stream.catchAll((failure) => {
            failedMidway = true
            const inBandError = input.protocol.streamError(tally.upstreamError ?? failureProblem(failure))
            return Stream.fail(new StreamBroken({ inBandError: unsent + inBandError }))
          }),
          Stream.ensuringWith((exit) =>
            record(input, admission, started, {
              status: 200,
              outcome: Exit.isInterrupted(exit) ? "cancelled" : failedMidway || Exit.isFailure(exit) ? "failed" : "completed",
              inputTokens: tally.inputTokens,
              outputTokens: billedOutputTokens(tally)
            })
          )
        )
        return Effect.succeed<Forwarded>({ _tag: "Stream", events, headers })
      }

      return {
        forward: (input) =>
          Effect.gen(function*() {
            const started = performance.now()
            const target = Option.getOrUndefined(upstreams.resolve(input.provider, input.region))
            if (target === undefined) {
              return yield* Effect.fail(
                new ForwardFailure({
                  problem: { status: 404, code: "region_not_found", message: `Region '${input.region}' is not served here.`, param: "region" },
                  headers: {}
                })
              )
            }
            const admission = yield* rateLimits.admit({
              principal: input.principal,
              family: input.family,
              model: input.model,
              tokens: input.reservedTokens,
              format: input.protocol.format
            }).pipe(Effect.mapError(({ headers, problem }) => new ForwardFailure({ problem, headers })))
            const response = yield* client.send(target, {
              provider: input.provider,
              path: input.path,
              body: JSON.stringify(input.body),
              ...(input.upstreamHeaders ? { headers: input.upstreamHeaders } : {})
            }).pipe(Effect.catchTag("UpstreamFailure", (failure) => refuse(input, admission, started, failureProblem(failure))))
            const headers = { ...admission.headers, ...pickHeaders(response.headers), ...simulatedHeader(target) }
            if (response.status >= 300) {
              const body = yield* readAll(response.body).pipe(
                Effect.map((bytes) => bytes.toString("utf8")),
                Effect.orElseSucceed(() => "")
              )
              return yield* refuse(input, admission, started, upstreamErrorProblem(input.protocol, response.status, body), headers)
            }
            const contentType = String(response.headers["content-type"] ?? "")
            if (input.stream !== contentType.includes("text/event-stream")) {
              yield* Stream.runDrain(response.body).pipe(Effect.ignore)
              return yield* refuse(input, admission, started, failureProblem(new UpstreamFailure({ kind: "malformed", detail: contentType })))
            }
            return yield* (input.stream
              ? relayStream(input, admission, started, response, headers)
              : relayJson(input, admission, started, response, headers))
          })
      }
    })
  )
}
