import { Data, type Effect } from "effect"

/** Which credential failed: API keys and admin tokens are counted apart, so guessing one slows only that one. */
export type CredentialKind = "api_key" | "admin_token"

/**
 * Failures spent: a credential not known to be valid is refused (429) without a lookup, for `retryAfterMs`.
 * A plain tagged value: refusals come in floods, and nothing reads a stack.
 */
export class CredentialsThrottled extends Data.TaggedClass("CredentialsThrottled")<{ readonly retryAfterMs: number }> {}

/** One count of failures: its key and how many failures it allows within the window. */
export interface FailureCount {
  readonly key: string
  readonly limit: number
}

export interface FailureTally {
  /** 0 when the failure was counted; else how long until the spent counts end (and nothing was counted). */
  readonly waitMs: number
  /** Each count's failures: after this one when it was counted, as they stand when refused. */
  readonly failures: ReadonlyArray<number>
}

/** The shared store (Redis) could not be asked: this instance counts on its own meanwhile. */
export class ThrottleStoreFailure extends Data.TaggedClass("ThrottleStoreFailure")<{ readonly cause: unknown }> {}

/**
 * Where failures are counted, in fixed windows that start at a count's first failure: this process, or
 * Redis for every instance. `add` counts one failure in every given count, or in none when one of them
 * has reached its limit: one atomic decision, so concurrent guesses cannot pass a limit together.
 */
export interface FailureStore {
  readonly add: (counts: ReadonlyArray<FailureCount>, windowMs: number) => Effect.Effect<FailureTally, ThrottleStoreFailure>
  /** Takes back one failure `add` counted in each of these counts (the credential proved valid after all). */
  readonly remove: (counts: ReadonlyArray<FailureCount>) => Effect.Effect<void, ThrottleStoreFailure>
}
