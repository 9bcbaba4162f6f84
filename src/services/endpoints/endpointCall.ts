import type { Effect } from "effect"
import type { Principal } from "../../domain/principal"
import type { Refusal } from "../../domain/refusals"
import type { SseEvent } from "../../domain/sse"
import type { UsageCeiling } from "../../domain/usageBounds"
import type { ForwardedEndpoint } from "../../providers/forwardedEndpoint"
import type { Provider } from "../../providers/provider"
import type { Route } from "../forwarding/Routes"

/**
 * A forwarded endpoint is served in one procedure (src/services/forwarding/EndpointForwarding.ts): declared
 * (src/providers/<provider>/endpoints.ts) → checked (its service, here: the one thing an endpoint writes) →
 * admitted, forwarded and recorded (the Forwarder). These are the shapes of the check.
 */

/** What the procedure reads of an endpoint's declaration. */
export type EndpointDeclaration = Pick<
  ForwardedEndpoint<string, Provider, unknown, unknown, unknown, unknown>,
  "provider" | "path" | "family" | "record" | "protocol" | "operation"
>

/** What the check is given: the caller, the route of the region, the decoded payload and the headers it passes on. */
export interface CheckedRequest<Payload> {
  readonly principal: Principal
  readonly region: string
  readonly route: Route
  readonly payload: Payload
  readonly headers: Readonly<Record<string, string | undefined>>
}

/** What the check makes of a request: how it goes upstream and the most it may cost. */
export interface EndpointCall {
  /** The gateway's model id. */
  readonly model: string
  /** The request as it goes upstream (the provider's wire format, the gateway's model id). */
  readonly body: Readonly<Record<string, unknown>>
  readonly stream: boolean
  /** Tokens reserved against the limits: the input as counted plus the most output allowed. */
  readonly reservedTokens: number
  /** Input tokens to bill if the upstream never reports them (a stream cut short). */
  readonly estimatedInputTokens: number
  /** The most the request could consume: reported usage is bounded by it. */
  readonly usageCeiling: UsageCeiling
  /** Protocol headers for the upstream (never the caller's credentials). */
  readonly upstreamHeaders?: Readonly<Record<string, string>>
  /** What the client sees of each upstream event; undefined drops it. */
  readonly relayEvent?: (event: SseEvent) => SseEvent | undefined
  /**
   * relayEvent made on a stream chunk that is exactly its events' encoding (the decoder's fedAsEncoded): the ranges of
   * that text (start and end pairs, in order) which relaying and encoding each event would remove, so that what is
   * sent is the chunk less them, without changing and encoding each event. Absent: each event is relayed.
   */
  readonly relayDrops?: (events: ReadonlyArray<SseEvent>) => ReadonlyArray<number>
}

/** An endpoint's check: its refusals (fields, model, context, bounds) before anything is reserved. */
export type EndpointCheck<Payload> = (request: CheckedRequest<Payload>) => Effect.Effect<EndpointCall, Refusal>
