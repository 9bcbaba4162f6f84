import { Cause, Effect, Context, Exit, Layer, Option, Redacted, type Tracer } from "effect"
import * as crypto from "node:crypto"
import { AppConfig } from "../../config"
import { catalogFamily } from "../../domain/rateLimits"
import { answerableStatus, type Problem } from "../../domain/problem"
import {
  type Admitted,
  type Refusal,
  ServiceStopping,
  UpstreamCredentialsRefused,
  UpstreamAnswered5xx,
  UpstreamRefused,
  type UpstreamRefusal,
  UpstreamUnavailable,
  WorkspaceKeyRefused,
  WorkspaceKeyUnusable
} from "../../domain/refusals"
import type { Provider } from "../../providers/provider"
import { admissionHeaders, problemOf } from "../../providers/render"
import { boundedCost, boundUsage, settledTokens, type UsageCeiling } from "../../domain/usageBounds"
import { billedOutputTokens, emptyTally, parseJson, type Protocol } from "../../providers/protocol"
import { boundedRetryHints, makeRedactor, redactBoth, relayedProblem } from "../../providers/untrusted"
import { encodedEvents, encodeSseEvent, noDrops, relayedChunk, type SseEvent } from "../../domain/sse"
import type { LimitFamily } from "../../domain/workspaceSettings"
import type { Principal } from "../../domain/principal"
import { Metrics } from "../../platform/Metrics"
import { spansWhen } from "../../platform/traceSpans"
import { formatTraceparent } from "../../domain/traceContext"
import { Prices } from "../usage/Prices"
import { ProviderCredentials } from "../providerKeys/ProviderCredentials"
import { type Admission, RateLimits } from "../limits/RateLimits"
import { type BudgetHold, Budgets } from "../limits/Budgets"
import {
  classify,
  discard,
  type ExchangeStop,
  type ReadWhole,
  unreadable,
  UpstreamClient,
  UpstreamFailure,
  type UpstreamResponse
} from "./UpstreamClient"
import { operatorWords } from "./UpstreamFailure"
import { type ApiRequestRecord, UsageRecorder } from "../usage/1-UsageRecorder"
import type { Deployment, UpstreamOperation } from "../../domain/deployments"
import { failsOver } from "../../domain/attemptOrder"
import { type Attempt, type Route, Routes } from "./Routes"
import { ModelCatalog } from "./ModelCatalog"
import { flatMapNow, matchEffectNow } from "./decidedNow"
import { kindOf, makeUpstreamKinds, secretsOf } from "./kinds"
import type { UpstreamCall, UpstreamKind } from "./kinds/UpstreamKind"
import type { EndpointCall, EndpointDeclaration } from "../endpoints/endpointCall"

/** Where a relayed stream goes: the client's connection, after the status and headers. */
export interface StreamSink {
  /** Sends text (or the upstream's bytes of it); false when the client's buffer is full and reading should wait for `onDrain`. */
  readonly write: (text: string | Uint8Array) => boolean
  readonly onDrain: (resume: () => void) => void
  /** The clean end of the stream. */
  readonly end: () => void
  /**
   * After the first byte a failure cannot change the status: the protocol's in-band error is sent,
   * then the connection is cut (a clean end would look like success); `afterCut` runs once it is.
   */
  readonly cut: (inBandError: string, afterCut: () => void) => void
  /** Calls `stop` if the service's shutdown grace ends while the stream is still open. */
  readonly onGraceEnd: (stop: () => void) => void
}

export type Forwarded =
  | { readonly _tag: "Json"; readonly body: Uint8Array; readonly headers: Readonly<Record<string, string>> }
  | {
    readonly _tag: "Stream"
    readonly headers: Readonly<Record<string, string>>
    /** Relays the upstream's events into the sink as they arrive; done when the stream ended or was cut. */
    readonly relay: (sink: StreamSink) => Effect.Effect<void>
  }

/**
 * A request on its way: what the endpoint asked for, and as it goes the workspace's own provider key, its budget
 * reservation, the deployment tried. Built once per request with every field it will have (one shape, no copies).
 */
interface Exchange extends ExchangeStop {
  readonly principal: Principal
  /** The rate-limit family the request counts in. */
  readonly family: LimitFamily
  /** Tokens reserved against the limits before forwarding: estimated input plus the most output allowed. */
  readonly reservedTokens: number
  readonly protocol: Protocol
  readonly provider: Provider
  /** Its name in the usage ledger; undefined for what is not a completion (a token count): no row, no tokens settled. */
  readonly endpoint: ApiRequestRecord["endpoint"] | undefined
  readonly region: string
  /** Where the region is served (Routes.route, which refuses the regions a provider does not serve). */
  readonly route: Route
  /** The gateway's model id (the catalog's); each deployment may know it by another. */
  readonly model: string
  /** Which operation it is, for the kinds that address each their own way. */
  readonly operation: UpstreamOperation
  /** The provider's own API path (a native deployment appends it to its url). */
  readonly path: string
  /** The validated request as it goes upstream, with the gateway's model id (replaced per deployment). */
  readonly body: Readonly<Record<string, unknown>>
  readonly stream: boolean
  /** Protocol headers for the upstream (never the caller's). */
  readonly upstreamHeaders: Readonly<Record<string, string>> | undefined
  /** Input tokens to bill if the upstream never reports them (a stream cut short). */
  readonly estimatedInputTokens: number
  /** The most the request could consume (its model's context, its maximum output): reported usage is bounded by it. */
  readonly usageCeiling: UsageCeiling
  /** What the client sees of each upstream event; undefined drops it. Default: the event unchanged. */
  readonly relayEvent: ((event: SseEvent) => SseEvent | undefined) | undefined
  /** relayEvent made on a stream chunk's own text (see EndpointCall.relayDrops). */
  readonly relayDrops: ((events: ReadonlyArray<SseEvent>) => ReadonlyArray<number>) | undefined
  readonly requestId: string | undefined
  /** The workspace's own key for the provider, once looked up; undefined when it has none. */
  ownKey: Redacted.Redacted<string> | undefined
  /** The deployment of the attempt that answered, or of the last one tried. */
  deployment: Deployment | undefined
  /** When the request was sent upstream (performance.now()); undefined when it never was. */
  sentAt: number | undefined
  /** The upstream exchange's span, ended when the request is recorded (traces exported only). */
  span: Tracer.Span | undefined
  /** The budgets' reservation, settled to the recorded cost (none for what is not billed). */
  budget: BudgetHold | undefined
}

/** Answers longer than this are read for usage without being parsed whole, where the protocol can. */
const largeAnswerBytes = 16 * 1024

/** Largest upstream error body read: its message is all that is used of it. */
const maxErrorBodyBytes = 64 * 1024

/**
 * Headers of the upstream's answer that clients act on: its retry hints, bounded (0–600 s). Its
 * rate-limit headers are not passed: they describe the service's own upstream account, shared by
 * every workspace; the client gets its workspace's limits instead. Node gives header names in lower case.
 */
const pickHeaders = (headers: UpstreamResponse["headers"]): Readonly<Record<string, string>> => {
  const after = headers["retry-after"]
  const afterMs = headers["retry-after-ms"]
  if (after === undefined && afterMs === undefined) return noHeaders
  return boundedRetryHints(typeof after === "string" ? after : undefined, typeof afterMs === "string" ? afterMs : undefined, Date.now())
}

/** When the answer budget is spent: a second is plenty for the answers being read to finish. */
const busyRetryHints: Record<string, string> = { "retry-after": "1", "retry-after-ms": "1000" }

/**
 * Why a successful answer cannot be what was asked for, if it cannot: a stream asked for and something
 * else given (a JSON answer from a server that ignores `stream`, a proxy's HTML page), or the reverse, or a
 * body encoded although the service asks for none (it sends no accept-encoding, so cannot expect to decode one).
 */
const unusableAnswer = (stream: boolean, streamContentType: string, headers: UpstreamResponse["headers"]): string | undefined => {
  const contentType = String(headers["content-type"] ?? "")
  if (stream !== contentType.includes(streamContentType)) return `content-type ${contentType}`
  const encoding = String(headers["content-encoding"] ?? "").trim().toLowerCase()
  return encoding === "" || encoding === "identity" ? undefined : `content-encoding ${encoding}`
}

const unavailable = (failure: UpstreamFailure, admitted: Admitted): UpstreamUnavailable =>
  new UpstreamUnavailable({ reason: failure.kind === "overloaded" ? "busy" : failure.kind, ...admitted })

const stopping = new ServiceStopping()

/** A usable JSON answer is always read whole by its exchange (readWhole): this stands for one that was not. */
const unread = new UpstreamFailure({ kind: "malformed", detail: "answer not read" })

const noHeaders: Readonly<Record<string, string>> = {}

/** Said on the answers of a simulated deployment. */
const simulatedHeader: Readonly<Record<string, string>> = { "x-workspace-api-simulated": "true" }

/** A request as one deployment gets it: the model under the deployment's id for it. */
const upstreamCall = (input: Exchange, { upstreamModel }: Attempt, headers: Readonly<Record<string, string>>): UpstreamCall => ({
  operation: input.operation,
  provider: input.provider,
  path: input.path,
  // No copy when the deployment knows the model by the gateway's id (a native deployment, the common case).
  body: upstreamModel === input.model || !("model" in input.body) ? input.body : { ...input.body, model: upstreamModel },
  upstreamModel,
  stream: input.stream,
  headers,
  ownKey: input.ownKey
})

/** An event as it came: what is relayed when neither the kind nor the endpoint changes events. */
const unchanged = (event: SseEvent): SseEvent | undefined => event

/** The kind's view of each event, then the endpoint's (either may drop it). */
const relayedBy = (
  kindRelay: ((event: SseEvent) => SseEvent | undefined) | undefined,
  endpointRelay: ((event: SseEvent) => SseEvent | undefined) | undefined
): (event: SseEvent) => SseEvent | undefined => {
  if (kindRelay === undefined) return endpointRelay ?? unchanged
  if (endpointRelay === undefined) return kindRelay
  return (event) => {
    const seen = kindRelay(event)
    return seen === undefined ? undefined : endpointRelay(seen)
  }
}

/** The events relayed and encoded; undefined when `fed` (their encoding) is given and none changes. */
const encodedRelay = (
  relayEvent: (event: SseEvent) => SseEvent | undefined,
  events: ReadonlyArray<SseEvent>,
  fed: string | undefined
): string | undefined => {
  let text = fed === undefined ? "" : undefined
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!
    const relayed = relayEvent(event)
    if (text === undefined) {
      if (relayed === event) continue
      text = encodedEvents(events, index)
    }
    if (relayed !== undefined) text += encodeSseEvent(relayed)
  }
  return text
}

/**
 * What is sent of a stream chunk (`bytes`) and its events. `fed` is the chunk's text when it is exactly their
 * encoding: the endpoint's relay is made on that text where it has a text form (`relayDrops`, the ranges it drops, given
 * only when the kind changes nothing of its own); else the text is sent as it came while every event is relayed
 * unchanged, encoded from the first one that is not. What is sent of `fed` is the upstream's own bytes where they are
 * its text (see relayedChunk).
 */
const chunkRelayed = (
  relayEvent: (event: SseEvent) => SseEvent | undefined,
  relayDrops: ((events: ReadonlyArray<SseEvent>) => ReadonlyArray<number>) | undefined,
  events: ReadonlyArray<SseEvent>,
  fed: string | undefined,
  bytes: Buffer
): string | Buffer => {
  if (fed === undefined) return encodedRelay(relayEvent, events, undefined) ?? ""
  if (relayDrops !== undefined) return relayedChunk(fed, bytes, relayDrops(events))
  return encodedRelay(relayEvent, events, fed) ?? relayedChunk(fed, bytes, noDrops)
}

/** A failure inside a stream, after the admission's headers were sent. */
const inStream: Admitted = { readings: undefined, hints: {} }

/**
 * Upstream refusals of the caller's request (4xx) pass through with their status and message (read
 * by the protocol, then redacted). A refusal of the service's own credentials, and every upstream
 * 5xx but the protocol's own (passedServerStatuses), is this service's failure.
 */
const upstreamRefusal = (
  exchange: Exchange,
  status: number,
  body: string,
  admitted: Admitted,
  relayed: (problem: Problem) => Problem
): UpstreamRefusal => {
  const protocol = exchange.protocol
  if (status === 401 || status === 403) {
    // With the workspace's own key the refusal is the workspace's to fix; with the service's, the service's.
    return exchange.ownKey === undefined
      ? new UpstreamCredentialsRefused(admitted)
      : new WorkspaceKeyRefused({ provider: exchange.provider.id, status, ...admitted })
  }
  if ((status >= 400 && status < 500) || protocol.passedServerStatuses?.includes(status) === true) {
    return new UpstreamRefused({ answer: relayed(protocol.upstreamProblem(answerableStatus(status), body)), ...admitted })
  }
  return new UpstreamAnswered5xx({ status, ...admitted })
}

/**
 * Sends a validated request upstream and relays the answer: JSON whole, streams event by event as
 * they arrive. Every forwarded request is recorded with its usage and cost — failed and cancelled
 * ones too — through the UsageRecorder, off the request path.
 */
export class Forwarder extends Context.Tag("Forwarder")<Forwarder, {
  /** The endpoint's call of a caller's request, on the route of its region. */
  readonly forward: (
    endpoint: EndpointDeclaration,
    principal: Principal,
    region: string,
    route: Route,
    requestId: string | undefined,
    call: EndpointCall
  ) => Effect.Effect<Forwarded, Refusal>
}>() {
  static readonly layer = Layer.effect(
    Forwarder,
    Effect.gen(function*() {
      const client = yield* UpstreamClient
      const recorder = yield* UsageRecorder
      const prices = yield* Prices
      const rateLimits = yield* RateLimits
      const budgets = yield* Budgets
      const metrics = yield* Metrics
      const config = yield* AppConfig
      const { upstreamLimits } = config
      const routes = yield* Routes
      const catalog = yield* ModelCatalog
      const kinds = yield* makeUpstreamKinds(routes.deployments)
      const span = spansWhen(config)
      const tracing = Option.isSome(config.tracing)
      const clock = yield* Effect.clock
      /** The clock's time (ns) of an earlier performance.now() reading: a span's event placed when it happened. */
      const nanosAt = (at: number): bigint => clock.unsafeCurrentTimeNanos() - BigInt(Math.round((performance.now() - at) * 1e6))
      // Every deployment's key and host: none may reach a client through an upstream's words.
      const secrets = secretsOf(kinds, routes.deployments)
      const redactService = makeRedactor(secrets.keys, secrets.hosts)
      /** What of the upstream's problem a client may see: the workspace's own key must not come back either. */
      const relayedFor = ({ ownKey }: Exchange) => {
        const redact = ownKey === undefined ? redactService : redactBoth(redactService, makeRedactor([Redacted.value(ownKey)]))
        return (problem: Problem): Problem => relayedProblem(problem, redact)
      }
      const credentials = yield* ProviderCredentials

      /** A request sent with the workspace's own key marks the key used (in the background) after `step`. */
      const thenMarkUsed = (input: Exchange, step: Effect.Effect<void>): Effect.Effect<void> =>
        input.ownKey === undefined
          ? step
          : Effect.zipRight(step, Effect.asVoid(Effect.forkDaemon(Effect.ignore(credentials.markUsed(input.principal.workspace.id, input.provider.id)))))

      const recorded = new WeakSet<Admission>()
      const record = (
        input: Exchange,
        admission: Admission,
        started: number,
        result: { status: number; outcome: ApiRequestRecord["outcome"]; inputTokens: number; outputTokens: number }
      ) => {
        // One record per admitted request, whichever of its endings (answer, failure, interruption) comes first.
        if (recorded.has(admission)) return Effect.void
        recorded.add(admission)
        const ended = performance.now()
        if (input.span !== undefined) {
          input.span.attribute("http.response.status_code", result.status)
          input.span.attribute("wsapi.outcome", result.outcome)
          input.span.end(clock.unsafeCurrentTimeNanos(), result.outcome === "completed" ? Exit.void : Exit.fail(`${result.outcome} (${result.status})`))
        }
        if (input.sentAt !== undefined) metrics.upstreamDuration(input.provider.id, input.region, input.deployment?.name ?? "", (ended - input.sentAt) / 1000)
        if (input.endpoint === undefined) return thenMarkUsed(input, admission.settle(0))
        // Upstream figures are untrusted: bounded by what the request could consume (and the ledger's ranges)
        // before they are settled, counted and recorded.
        const tokens = boundUsage(result, input.usageCeiling)
        const cost = boundedCost(prices.cost(input.model, tokens.value))
        const clamped = tokens.clamped.length + cost.clamped.length > 0
        const family = catalogFamily(input.family)
        const model = family === undefined ? undefined : catalog.find(input.provider.id, family, input.model)
        const { inputTokens, outputTokens } = tokens.value
        metrics.usage({
          family: input.family,
          provider: input.provider.id,
          workspaceId: input.principal.workspace.id,
          inputTokens,
          outputTokens,
          costUsd: cost.value
        })
        const rateSettled = admission.settle(settledTokens(inputTokens + outputTokens, input.reservedTokens, model?.contextLength))
        // A request without a budget (or with nothing to settle) adds no step.
        const budgetSettled = input.budget === undefined ? Effect.void : input.budget.settle(cost.value)
        const settled = budgetSettled === Effect.void ? rateSettled : Effect.zipRight(rateSettled, budgetSettled)
        return Effect.zipRight(
          !clamped ? settled : Effect.zipRight(
            Effect.logWarning("upstream usage out of range: recorded as the bound").pipe(
              Effect.annotateLogs({ model: input.model, requestId: input.requestId ?? null, clamped: [...tokens.clamped, ...cost.clamped] })
            ),
            settled
          ),
          thenMarkUsed(input, recorder.record({
            recordId: crypto.randomUUID(),
            workspaceId: input.principal.workspace.id,
            keyId: input.principal.keyId,
            endpoint: input.endpoint,
            provider: input.provider.id,
            region: input.region,
            model: input.model,
            status: result.status,
            outcome: result.outcome,
            stream: input.stream,
            inputTokens,
            outputTokens,
            costUsd: cost.value,
            clamped,
            latencyMs: ended - started,
            requestId: input.requestId,
            createdAt: new Date(),
            byok: input.ownKey !== undefined,
            // The deployment that answered, or the last one tried.
            deployment: input.deployment?.name
          }).pipe(span("usage.record")))
        )
      }

      /** An admitted request that failed: recorded with the status its client gets (the provider renders it). */
      const refuse = (input: Exchange, admission: Admission, started: number, refusal: UpstreamRefusal) =>
        Effect.zipRight(
          record(input, admission, started, {
            status: problemOf(input.provider, refusal).status,
            outcome: "failed",
            inputTokens: 0,
            outputTokens: 0
          }),
          Effect.fail(refusal)
        )

      const admitted = (admission: Admission, hints: Readonly<Record<string, string>> = noHeaders): Admitted => ({
        readings: admission.readings,
        hints
      })

      /** A JSON answer as the exchange read it (or failed to): relayed whole, or refused, and recorded either way. */
      const relayJson = (
        input: Exchange,
        kind: UpstreamKind,
        call: UpstreamCall,
        admission: Admission,
        started: number,
        read: Buffer | UpstreamFailure,
        headers: Record<string, string>
      ): Effect.Effect<Forwarded, UpstreamRefusal> => {
        // An answer that cannot be read, or is not the protocol's: the service's failure, recorded.
        const failed = (failure: UpstreamFailure) =>
          refuse(input, admission, started, unavailable(failure, admitted(admission, failure.kind === "overloaded" ? busyRetryHints : noHeaders)))
        if (read instanceof UpstreamFailure) return failed(read)
        const rewritten = kind.jsonAnswer === undefined ? undefined : kind.jsonAnswer(read.toString("utf8"), call)
        const bytes = rewritten === undefined ? read : Buffer.from(rewritten, "utf8")
        // A large answer is read from its bytes where the protocol can: decoded to text only to be parsed whole.
        const usage = (bytes.length > largeAnswerBytes ? input.protocol.usageOfLargeAnswer?.(bytes) : undefined) ??
          input.protocol.usageOfBody(parseJson(rewritten ?? bytes.toString("utf8")))
        return usage === undefined
          ? failed(new UpstreamFailure({ kind: "malformed", detail: "answer is not valid JSON of the protocol" }))
          : Effect.as(
            record(input, admission, started, { status: 200, outcome: "completed", inputTokens: usage.inputTokens, outputTokens: usage.outputTokens }),
            { _tag: "Json" as const, body: bytes, headers }
          )
      }

      const relayStream = (
        input: Exchange,
        kind: UpstreamKind,
        admission: Admission,
        started: number,
        response: UpstreamResponse,
        headers: Record<string, string>
      ): Forwarded => {
        // Made when the stream is relayed; one mask a stream (the record's), no canceller of the wait's own.
        const relay = (sink: StreamSink) => {
          const body = response.body
          const tally = emptyTally(input.estimatedInputTokens)
          const relayEvent = relayedBy(kind.relayEvent, input.relayEvent)
          const relayDrops = kind.relayEvent === undefined ? input.relayDrops : undefined
          // How the stream ended, read once the wait is over (an interruption is "cancelled", whatever was set).
          let outcome: ApiRequestRecord["outcome"] = "cancelled"
          // Node events rather than an Effect Stream: this runs for every chunk of every stream.
          const relayed = Effect.async<void>((resume) => {
            const decoder = kind.streamDecoder(upstreamLimits.maxSseEventBytes)
            let done = false
            const ended = (how: ApiRequestRecord["outcome"]) => {
              outcome = how
              resume(Effect.void)
            }
            /** Events read before the failure (`unsent`) still reach the client, ahead of the error. */
            const fail = (failure: UpstreamFailure, unsent: string) => {
              done = true
              discard(body)
              const problem = tally.upstreamError === undefined
                ? problemOf(input.provider, unavailable(failure, inStream))
                : relayedFor(input)(tally.upstreamError)
              sink.cut(unsent + input.protocol.streamError(problem), () => ended("failed"))
            }
            // The service stops: the client is told so in the stream's own words before the connection
            // closes, and the stream is recorded as cancelled (billed for what was generated).
            sink.onGraceEnd(() => {
              if (done) return
              done = true
              discard(body)
              sink.cut(input.protocol.streamError(problemOf(input.provider, stopping)), () => ended("cancelled"))
            })
            // Cut before the relay began (after the headers were read): nothing more will come.
            const failed = unreadable(body)
            if (failed !== undefined) return fail(failed, "")
            body.on("data", (chunk: Buffer) => {
              if (done) return
              const events = decoder.feed(chunk)
              if (events === undefined) {
                return fail(new UpstreamFailure({ kind: "malformed", detail: `stream event over ${upstreamLimits.maxSseEventBytes} bytes` }), "")
              }
              for (let index = 0; index < events.length; index++) {
                if (!input.protocol.observe(events[index]!, tally)) {
                  return fail(
                    new UpstreamFailure({ kind: "malformed", detail: "stream event not valid for the protocol" }),
                    encodedRelay(relayEvent, events.slice(0, index), undefined) ?? ""
                  )
                }
              }
              const sent = chunkRelayed(relayEvent, relayDrops, events, decoder.fedAsEncoded?.(), chunk)
              // One write per upstream chunk, however many events it held.
              if (sent.length !== 0 && !sink.write(sent)) {
                body.pause()
                sink.onDrain(() => body.resume())
              }
            })
            // `on`, not `once` (a wrapper and its state a stream): the body ends once, and `done` guards it anyway.
            body.on("end", () => {
              if (done) return
              // A clean close before the protocol's terminal event is a cut-off answer, not a complete one.
              if (!tally.terminated) {
                return fail(new UpstreamFailure({ kind: "malformed", detail: "stream ended before its terminal event" }), "")
              }
              done = true
              sink.end()
              ended("completed")
            })
            body.on("error", (cause) => {
              if (!done) fail(classify(cause), "")
            })
          })
          return Effect.onExit(relayed, (exit) => {
            // The client went away (or the relay died): the upstream exchange ends too.
            if (Exit.isFailure(exit)) discard(body)
            return record(input, admission, started, {
              status: 200,
              outcome: Exit.isSuccess(exit) ? outcome : "cancelled",
              inputTokens: tally.inputTokens,
              outputTokens: billedOutputTokens(tally)
            })
          })
        }
        return { _tag: "Stream", headers, relay }
      }

      return {
        forward: (endpoint, principal, region, route, requestId, call) => {
          // The exchange, made once with every field it will have: set as the request goes, never copied.
          const input: Exchange = {
            principal,
            family: endpoint.family,
            reservedTokens: call.reservedTokens,
            protocol: endpoint.protocol,
            provider: endpoint.provider,
            endpoint: endpoint.record,
            region,
            route,
            model: call.model,
            operation: endpoint.operation,
            path: endpoint.path,
            body: call.body,
            stream: call.stream,
            upstreamHeaders: call.upstreamHeaders,
            estimatedInputTokens: call.estimatedInputTokens,
            usageCeiling: call.usageCeiling,
            relayEvent: call.relayEvent,
            relayDrops: call.relayDrops,
            requestId,
            ownKey: undefined,
            deployment: undefined,
            sentAt: undefined,
            span: undefined,
            budget: undefined,
            stop: undefined
          }
          let started = 0
          // Set once the request is sent: from then on, an interruption is recorded.
          let inFlight: Admission | undefined
          // The upstream's answer once its headers came: ended if the request is interrupted before it is read or relayed.
          let answer: UpstreamResponse | undefined

          // The steps as one chain of plain functions, each an effect only where it waits or may refuse (a
          // generator would cost its own steps and keep its frame while the exchange waits).
          const send = (admission: Admission): Effect.Effect<Forwarded, Refusal> => {
            const attempts = route.attempts(input.model, input.ownKey !== undefined)
            if (attempts.length === 0) {
              // The workspace's own key goes to native deployments only, and this route has none for the model.
              return refuse(input, admission, started, new WorkspaceKeyUnusable({
                provider: input.provider.id,
                reason: "unavailable",
                ...admitted(admission)
              }))
            }
            // The exchange's span lasts until the answer's end (a stream's too), so it is ended by `record`.
            return tracing
              ? Effect.flatMap(Effect.makeSpan("upstream.exchange", {
                kind: "client",
                attributes: { "wsapi.provider": input.provider.id, "wsapi.region": region, "wsapi.model": input.model },
                captureStackTrace: false
              }), (exchangeSpan) => attemptAll(admission, attempts, exchangeSpan))
              : attemptAll(admission, attempts, undefined)
          }

          const attemptAll = (admission: Admission, attempts: ReadonlyArray<Attempt>, exchangeSpan: Tracer.Span | undefined) => {
            // The upstream continues the trace as a child of the exchange.
            const protocolHeaders = exchangeSpan === undefined
              ? input.upstreamHeaders ?? noHeaders
              : Object.assign({}, input.upstreamHeaders, { traceparent: formatTraceparent(exchangeSpan) })
            const sentAt = performance.now()
            input.sentAt = sentAt
            input.span = exchangeSpan
            inFlight = admission
            // Deployments are tried in order until one answers with something other than a failure worth another
            // try; only the last attempt's failure reaches the client (nothing has been sent to it yet).
            const attempt = (index: number): Effect.Effect<Forwarded, Refusal> => {
              const tried = attempts[index]!
              const last = index === attempts.length - 1
              const { deployment } = tried
              const kind = kindOf(kinds, deployment)
              // The record names the last deployment tried.
              input.deployment = deployment
              const call = upstreamCall(input, tried, protocolHeaders)
              // Read whole as it comes, in the exchange's own step: an error answer (for its message) and a JSON
              // answer that is the one asked for. A stream is relayed; an unusable answer is not read at all.
              const readWhole: ReadWhole = (status, headers) =>
                status >= 300
                  ? maxErrorBodyBytes
                  : input.stream || unusableAnswer(false, kind.streamContentType, headers) !== undefined
                  ? undefined
                  : upstreamLimits.maxJsonAnswerBytes
              const refused = (refusal: UpstreamRefusal) => refuse(input, admission, started, refusal)
              // The exchange's stop is handed to `input`: the interruption handler below ends it (no canceller of its own).
              return Effect.matchEffect(flatMapNow(kind.prepare(deployment, call), (prepared) => client.exchange(prepared, readWhole, input)), {
                // A failure before an answer: the next deployment may answer.
                onFailure: (failure) => {
                  if (!last && failure.kind !== "overloaded") {
                    return Effect.flatMap(routes.failed(deployment, operatorWords(failure), undefined), () => attempt(index + 1))
                  }
                  const unavailableNow = () => refused(unavailable(failure, admitted(admission)))
                  return failure.kind === "overloaded"
                    ? unavailableNow()
                    : Effect.flatMap(routes.failed(deployment, operatorWords(failure), undefined), unavailableNow)
                },
                onSuccess: (response) => {
                  answer = response
                  metrics.upstreamFirstByte(input.provider.id, region, deployment.name, (response.headersAt - sentAt) / 1000)
                  exchangeSpan?.event("first_byte", nanosAt(response.headersAt), { "http.response.status_code": response.status })
                  const retryHints = pickHeaders(response.headers)
                  const hints = deployment.simulated ? Object.assign({}, retryHints, simulatedHeader) : retryHints
                  if (response.status >= 300) {
                    // Its message, if it could be read (within maxErrorBodyBytes).
                    const raw = Buffer.isBuffer(response.whole) ? response.whole.toString("utf8") : ""
                    const { body, status } = kind.errorAnswer(response.status, response.headers, raw)
                    const refusedByUpstream = () => {
                      const refusal = upstreamRefusal(input, status, body, admitted(admission, hints), relayedFor(input))
                      return refusal._tag !== "WorkspaceKeyRefused" ? refused(refusal) : Effect.flatMap(
                        Effect.forkDaemon(Effect.ignore(credentials.recordRefusal(
                          principal.workspace.id,
                          input.provider.id,
                          `The provider refused the key (status ${status}).`
                        ))),
                        () => refused(refusal)
                      )
                    }
                    // The deployment's own trouble (overloaded, down, timing out): the next one may answer. Never with
                    // the workspace's own key refused or the request itself refused: those are answered at once.
                    if (failsOver(status)) {
                      const seconds = retryHints["retry-after"] === undefined ? undefined : Number(retryHints["retry-after"])
                      return Effect.flatMap(routes.failed(deployment, `answered ${status}`, seconds), () => last ? refusedByUpstream() : attempt(index + 1))
                    }
                    return flatMapNow(routes.succeeded(deployment), refusedByUpstream)
                  }
                  const unusable = unusableAnswer(input.stream, kind.streamContentType, response.headers)
                  if (unusable !== undefined) {
                    // Not read: whatever it is, it is not the answer asked for.
                    discard(response.body)
                    return Effect.flatMap(
                      routes.failed(deployment, `malformed: ${unusable}`, undefined),
                      () => refused(unavailable(new UpstreamFailure({ kind: "malformed", detail: unusable }), admitted(admission)))
                    )
                  }
                  return flatMapNow(routes.succeeded(deployment), () => {
                    const rateHeaders = admissionHeaders(input.provider, admission.readings)
                    // Object.assign rather than a literal with two spreads, which makes new maps each call (Node 20): same object.
                    const headers = hints === noHeaders ? rateHeaders : Object.assign({}, rateHeaders, hints)
                    return input.stream
                      ? Effect.succeed(relayStream(input, kind, admission, started, response, headers))
                      : relayJson(input, kind, call, admission, started, response.whole ?? unread, headers)
                  })
                }
              })
            }
            return attempt(0)
          }

          // The workspace's own key when it has one for this provider: never the service's key instead.
          const withKey = (admission: Admission) =>
            matchEffectNow(credentials.keyFor(principal.workspace.id, input.provider.id), {
              onFailure: (failure) =>
                refuse(input, admission, started, new WorkspaceKeyUnusable({
                  provider: input.provider.id,
                  reason: failure._tag === "ProviderKeyUnreadable" ? "unreadable" : "unavailable",
                  ...admitted(admission)
                })),
              onSuccess: (key) => {
                input.ownKey = Option.getOrUndefined(key)
                return send(admission)
              }
            })

          const admit = () =>
            Effect.flatMap(
              rateLimits.admit({ principal, family: input.family, model: input.model, tokens: input.reservedTokens }),
              (admission) =>
                // Every budget that applies holds the request's largest possible cost before it goes upstream; refused,
                // its rate-limit tokens go back. The reservation is given back if the client leaves before the request is sent.
                input.endpoint === undefined ? withKey(admission) : matchEffectNow(
                  budgets.reserve(
                    principal,
                    prices.cost(input.model, { inputTokens: input.estimatedInputTokens, outputTokens: input.usageCeiling.outputTokens }),
                    admission.readings
                  ),
                  {
                    onFailure: (refusal) => Effect.zipRight(admission.settle(0), Effect.fail(refusal)),
                    onSuccess: (hold) => {
                      input.budget = hold
                      return withKey(admission)
                    }
                  }
                )
            )

          // The client left before the answer (499, nginx's "client closed request"): the upstream exchange is stopped,
          // its answer, if it came, ended unread, and the request is billed for the prompt the upstream was sent, as a
          // cancelled stream is. Effect.onInterrupt's rule (interruption only) in one masked step over the request.
          return Effect.uninterruptibleMask((restore) => {
            started = performance.now()
            // A billable request whose record could not be kept is refused before it costs anything.
            return Effect.catchAllCause(restore(input.endpoint === undefined ? admit() : flatMapNow(recorder.requireDurable, admit)), (cause) => {
              if (!Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
              input.stop?.()
              if (answer !== undefined) discard(answer.body)
              const ended = inFlight === undefined
                ? (input.budget === undefined ? Effect.void : input.budget.settle(0))
                : record(input, inFlight, started, { status: 499, outcome: "cancelled", inputTokens: input.estimatedInputTokens, outputTokens: 0 })
              return Effect.zipRight(ended, Effect.failCause(cause))
            })
          })
        }
      }
    })
  )
}
