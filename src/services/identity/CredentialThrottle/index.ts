import { Context, Effect, Layer } from "effect"
import { AppConfig, type AppConfigShape } from "../../../config"
import { networkOf } from "../../../domain/clientAddress"
import type { RedisConnectionOptions } from "../../../platform/redisConnection"
import { type CredentialKind, CredentialsThrottled, type FailureCount, type FailureStore } from "./contract"
import { makeMemoryFailureStore } from "./memory"

export * from "./contract"

/** AUTH_FAILURE_*: failures allowed per address, per network and in all within the window. */
export type ThrottleSettings = AppConfigShape["authFailures"]

/** Refused addresses remembered here, at most: beyond it the oldest are forgotten (and asked about again). */
const maxRemembered = 10_000

/** What each count of an attempt covers, in the order `countsOf` lists them. */
const scopes = ["address", "network", "all"] as const

/**
 * Failed credentials, throttled so that guessing is slow and cheap to refuse while a valid credential is
 * never refused: the caller asks only for a credential that is not known to be valid (an API key whose
 * hash is not among the valid ones, a wrong admin token), before looking it up. Counted per kind of
 * credential, per client address, per network (/24, /64: rotating addresses) and in all (a ceiling,
 * logged when reached); in Redis for every instance when RATE_LIMIT_STORE=redis, else in this process.
 */
export class CredentialThrottle extends Context.Tag("CredentialThrottle")<CredentialThrottle, {
  /**
   * Counts one failure of a credential not known to be valid, before it is checked. Fails (counting
   * nothing) when the address, its network or everyone spent the failures of the window: the credential
   * is then refused without a lookup.
   */
  readonly reserveFailure: (kind: CredentialKind, address: string | undefined) => Effect.Effect<void, CredentialsThrottled>
  /**
   * Gives back a failure `reserveFailure` counted for a credential that proved valid after all (a key made
   * on another instance a moment ago, not yet among this instance's valid ones): a valid credential is
   * never a failure. Best effort: a store that does not answer keeps the count until its window ends.
   */
  readonly releaseFailure: (kind: CredentialKind, address: string | undefined) => Effect.Effect<void>
}>() {
  /** Counted in this process: right for one instance. */
  static readonly memory = (settings: ThrottleSettings) =>
    Layer.effect(CredentialThrottle, Effect.sync(() => makeThrottle(settings, makeMemoryFailureStore())))

  /** Counted in Redis, shared by every instance (this instance counts alone while Redis does not answer). */
  static readonly redis = (settings: ThrottleSettings, options: RedisConnectionOptions) =>
    Layer.scoped(
      CredentialThrottle,
      Effect.flatMap(Effect.promise(() => import("./redis")), (redis) =>
        Effect.map(redis.makeRedisFailureStore(options), (store) => makeThrottle(settings, store)))
    )

  /** In Redis when the rate limits are (RATE_LIMIT_STORE=redis: several instances), else in this process. */
  static readonly fromConfig = Layer.unwrapEffect(
    Effect.map(AppConfig, ({ authFailures, rateLimit }) =>
      rateLimit.store === "memory"
        ? CredentialThrottle.memory(authFailures)
        : CredentialThrottle.redis(authFailures, { url: rateLimit.redisUrl, timeoutMs: rateLimit.redisTimeoutMs }))
  )
}

/** The counts one attempt of `kind` from `address` goes into; one hash tag per kind (one Redis cluster slot). */
const countsOf = (settings: ThrottleSettings, kind: CredentialKind, address: string): ReadonlyArray<FailureCount> => [
  { key: `af:{${kind}}:address:${address}`, limit: settings.limit },
  { key: `af:{${kind}}:network:${networkOf(address)}`, limit: settings.networkLimit },
  { key: `af:{${kind}}:all`, limit: settings.globalLimit }
]

const makeThrottle = (settings: ThrottleSettings, store: FailureStore): CredentialThrottle["Type"] => {
  const windowMs = settings.windowSeconds * 1_000
  // While the shared store does not answer, this instance counts alone (never refusing for want of Redis).
  const alone = makeMemoryFailureStore()
  let storeDown = false
  const add = (counts: ReadonlyArray<FailureCount>) =>
    store.add(counts, windowMs).pipe(
      Effect.tap(() => {
        if (!storeDown) return Effect.void
        storeDown = false
        return Effect.logInfo("failed credentials counted across instances again")
      }),
      Effect.catchAll((unavailable) => {
        const counted = alone.add(counts, windowMs).pipe(Effect.orDie)
        if (storeDown) return counted
        storeDown = true
        return Effect.zipRight(
          Effect.logWarning("failed credentials counted by this instance alone: their store does not answer", unavailable.cause),
          counted
        )
      })
    )

  // Addresses refused lately, until when: answered without asking the store again.
  const refusedUntil = new Map<string, number>()
  const remember = (key: string, until: number) => {
    if (refusedUntil.size >= maxRemembered) {
      const oldest = refusedUntil.keys().next()
      if (oldest.done !== true) refusedUntil.delete(oldest.value)
    }
    refusedUntil.set(key, until)
  }

  /** Logged once per count and window, by the attempt that spent it. */
  const logSpent = (kind: CredentialKind, address: string, counts: ReadonlyArray<FailureCount>, failures: ReadonlyArray<number>) => {
    const spent = scopes.filter((_, i) => failures[i] === counts[i]!.limit)
    return Effect.forEach(spent, (scope) =>
      Effect.logWarning(scope === "all" ? "failed credentials: the ceiling of all addresses is reached" : "failed credentials throttled").pipe(
        Effect.annotateLogs({
          credential: kind,
          scope,
          ...(scope === "all" ? {} : { subject: scope === "address" ? address : networkOf(address) }),
          failures: counts[scopes.indexOf(scope)]!.limit,
          windowSeconds: settings.windowSeconds
        })
      ), { discard: true })
  }

  return {
    releaseFailure: (kind, address = "unknown") => {
      const counts = countsOf(settings, kind, address)
      return store.remove(counts).pipe(Effect.catchAll(() => alone.remove(counts)), Effect.ignore)
    },
    reserveFailure: (kind, address = "unknown") =>
      Effect.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        const remembered = `${kind} ${address}`
        const until = refusedUntil.get(remembered)
        if (until !== undefined && until > now) return Effect.fail(new CredentialsThrottled({ retryAfterMs: until - now }))
        if (until !== undefined) refusedUntil.delete(remembered)
        const counts = countsOf(settings, kind, address)
        return Effect.flatMap(add(counts), ({ failures, waitMs }) => {
          if (waitMs > 0) {
            remember(remembered, now + waitMs)
            return Effect.fail(new CredentialsThrottled({ retryAfterMs: waitMs }))
          }
          return logSpent(kind, address, counts, failures)
        })
      })
  }
}
