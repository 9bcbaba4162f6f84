import type { Redacted } from "effect"
import type { Problem } from "../domain/problem"
import type { LimitReadings, RequestRefusal } from "../domain/refusals"

/** The service's settings a provider's key check may need (a part of AppConfigShape, src/config.ts). */
export interface KeyCheckSettings {
  /** UPSTREAM_MESSAGES_VERSION: the messages protocol's version header. */
  readonly upstreamMessagesVersion: string
}

/**
 * What makes a provider itself on the gateway side, read by the generic forwarding code instead of
 * switching on names: the gateway twin of the simulator's `Dialect` (src/simulator/dialect.ts).
 */
export interface ProviderDialect<Id extends string = string> {
  /** The path segment (`/provider_a/…`), the error format and the name in the usage ledger. */
  readonly id: Id
  /** The regions it is served in; any other is "not found" for it. */
  readonly regions: ReadonlyArray<string>
  /** Where its clients may send the key: always `Authorization: Bearer`, some also `x-api-key`. */
  readonly keyHeaders: { readonly xApiKey: boolean }
  /** Its error body for a problem (with its client library's error type of the status), as its error schema encodes it. */
  readonly errorBody: (problem: Problem) => unknown
  /** The rate-limit headers its clients know. */
  readonly rateLimitHeaders: (readings: LimitReadings) => Record<string, string>
  /** How its upstream expects credentials (the service's own, or a workspace's). */
  readonly upstreamAuth: (key: Redacted.Redacted) => Record<string, string>
  /**
   * Its cheapest authenticated call, to check a workspace's key before it is saved: only the answer's status
   * is read (2xx: accepted; 401/403: refused).
   */
  readonly keyCheck: { readonly path: string; readonly headers: (settings: KeyCheckSettings) => Record<string, string> }
  /** Its own wording of a request refusal; undefined for the shared wording (src/providers/render.ts). */
  readonly word: (refusal: RequestRefusal) => Problem | undefined
}
