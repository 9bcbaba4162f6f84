import type { Effect, Redacted } from "effect"
import type { Deployment, UpstreamOperation } from "../../../domain/deployments"
import type { SseEvent } from "../../../domain/sse"
import type { ProviderDialect } from "../../../providers/providerDialect"
import type { UpstreamFailure } from "../UpstreamFailure"

/**
 * The seam between the forwarding core and the places a model is served (DESIGN "Upstreams: routes and
 * deployments"). A kind of upstream says how a request is addressed, authorized, encoded and framed, and how
 * its answers and errors read; the forwarding core never switches on kinds, and the provider dialects stay as
 * they are: whatever a kind receives or gives back is in the provider's own wire format.
 */

export type { UpstreamOperation } from "../../../domain/deployments"

/** A validated request on its way to one deployment, in the provider's own wire format. */
export interface UpstreamCall {
  readonly operation: UpstreamOperation
  /** Whose protocol it is (its record says how the native API takes credentials). */
  readonly provider: ProviderDialect
  /** The provider's own API path, e.g. /v1/chat/completions (what a native deployment appends to its url). */
  readonly path: string
  /** The request body as the provider's API takes it, `model` already the upstream's id (or deployment name). */
  readonly body: Readonly<Record<string, unknown>>
  /** The upstream's model id or deployment name (also in `body.model` where the body has one). */
  readonly upstreamModel: string
  readonly stream: boolean
  /** Protocol headers (anthropic-version, anthropic-beta, traceparent): never the caller's credentials. */
  readonly headers: Readonly<Record<string, string>>
  /** The workspace's own provider key (BYOK), only ever given to a `native` deployment. */
  readonly ownKey: Redacted.Redacted<string> | undefined
}

/** The HTTP request a kind makes of a call: sent as it is. */
export interface PreparedCall {
  /** Absolute: origin, path and query. */
  readonly url: string
  readonly method: "POST" | "GET"
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
}

/** Turns an upstream's stream bytes into the provider's own SSE events, as they complete. */
export interface StreamDecoder {
  /**
   * The events completed by these bytes; undefined when the stream cannot be read (an event over the
   * bound, a frame that does not decode): the relay then fails the stream as malformed.
   */
  readonly feed: (bytes: Uint8Array) => ReadonlyArray<SseEvent> | undefined
  /**
   * The text of the last feed when it was exactly the events it completed as encodeSseEvent writes them: what
   * the client is sent when every one of them is relayed unchanged (no decode and encode again). Absent: never.
   * Asked once a feed: a decoder may answer undefined when asked again (not keeping the text while the stream waits).
   */
  readonly fedAsEncoded?: () => string | undefined
}

/** An upstream's refusal or failure, rewritten into the provider's own error answer. */
export interface ErrorAnswer {
  readonly status: number
  /** The error body in the provider's own error format (what its protocol's `upstreamProblem` reads). */
  readonly body: string
}

export interface UpstreamKind<D extends Deployment = Deployment> {
  readonly kind: D["kind"]
  /** The deployment's secrets (keys, signing secrets, private keys): never relayed in an upstream's words. */
  readonly secrets: (deployment: D) => ReadonlyArray<string>
  /**
   * Addresses, encodes and authorizes a call for a deployment. May take time (a token to fetch, credentials
   * from the chain) and fail as an UpstreamFailure (`unreachable` when a token endpoint cannot be reached).
   */
  readonly prepare: (deployment: D, call: UpstreamCall) => Effect.Effect<PreparedCall, UpstreamFailure>
  /** What a stream answer's content-type contains (`text/event-stream`, `application/vnd.amazon.eventstream`). */
  readonly streamContentType: string
  /** A decoder of one stream answer, bounding each event to maxEventBytes. */
  readonly streamDecoder: (maxEventBytes: number) => StreamDecoder
  /**
   * An answer of status ≥ 300 in the provider's own error format, with the status the provider would have
   * answered (Bedrock's ThrottlingException is 429, Azure's content filter 400 `content_filter`, …).
   */
  readonly errorAnswer: (status: number, headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>, body: string) => ErrorAnswer
  /** A successful JSON answer as the provider's own API gives it (undefined: unchanged). */
  readonly jsonAnswer?: (body: string, call: UpstreamCall) => string
  /** What the client sees of each stream event (undefined drops it): the kind's own additions removed. */
  readonly relayEvent?: (event: SseEvent) => SseEvent | undefined
}
