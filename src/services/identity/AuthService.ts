import { Context, Data, Duration, Effect, Layer, Option, Schedule } from "effect"
import { hashApiKey, isWellFormedApiKey, sameHash, Scope } from "../../domain/apiKey"
import type { Principal } from "../../domain/principal"
import { ApiKeys, type KeyWithWorkspace } from "./ApiKeys"
import { CredentialThrottle, type CredentialsThrottled } from "./CredentialThrottle/index"
import { expiringLookup } from "../../platform/expiringLookup"
import { StorageFailure } from "../../platform/StorageFailure"

export type AuthRefusalReason = "missing" | "malformed" | "unknown" | "revoked" | "scope"

export class AuthRefused extends Data.TaggedError("AuthRefused")<{
  readonly reason: AuthRefusalReason
  readonly scope: Scope
}> {
  /** One wording per reason; none of them tells an attacker which keys exist. */
  get description(): string {
    switch (this.reason) {
      case "missing":
        return "No API key provided. Send it as 'Authorization: Bearer <API_KEY>'."
      case "scope":
        return `This API key does not have the ${this.scope} scope required by this endpoint.`
      default:
        return "Invalid API key provided."
    }
  }
}

const reasons: ReadonlyArray<AuthRefusalReason> = ["missing", "malformed", "unknown", "revoked", "scope"]

/**
 * One shared instance per reason and scope, built once: refusals can come in floods (bad keys), and
 * building an Error captures a stack each time, which nothing reads here.
 */
const refusals: ReadonlyMap<string, AuthRefused> = new Map(
  reasons.flatMap((reason) => Scope.literals.map((scope) => [`${reason}:${scope}`, new AuthRefused({ reason, scope })] as const))
)
const authRefused = (reason: AuthRefusalReason, scope: Scope): AuthRefused => 
  refusals.get(`${reason}:${scope}`) ?? new AuthRefused({ reason, scope })

/** How long a key lookup is trusted: revocation reaches every instance within this time. */
export const keyCacheTtl = Duration.seconds(1)
const lastUsedFlushInterval = Duration.seconds(5)

export class AuthService extends Context.Tag("AuthService")<AuthService, {
  /**
   * The caller of a request that presented `token`, from `address`. A key not known to be valid (a guess,
   * a stale key, not even a key) is counted as a failed credential of the address before it is looked
   * up, and refused without a lookup (CredentialsThrottled) once the address spent its failures; a valid
   * key never is. No key at all, or a valid key without the scope, is no failed credential.
   */
  readonly authenticate: (
    token: string | undefined,
    scope: Scope,
    address: string | undefined
  ) => Effect.Effect<Principal, AuthRefused | CredentialsThrottled | StorageFailure>
}>() {
  static readonly layer = Layer.scoped(
    AuthService,
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const throttle = yield* CredentialThrottle
      // Read synchronously on the hot path (the test clock in tests: the layer is built under it).
      const clock = yield* Effect.clock
      // Storage failures are not remembered: the next request asks again.
      const findKey = expiringLookup({
        lookup: (hashHex) => keys.findByHash(Buffer.from(hashHex, "hex")),
        timeToLive: keyCacheTtl,
        capacity: 100_000
      })

      // Last-used times are collected in memory (a map owned by this service, replaced at each
      // flush) and written in one batch every few seconds.
      let lastUsed = new Map<string, Date>()
      const flush = Effect.suspend(() => {
        const batch = lastUsed
        lastUsed = new Map()
        return keys.recordLastUsed(batch).pipe(
          // A failed write puts the batch back; newer times win when merged.
          Effect.catchAll(() =>
            Effect.sync(() => {
              const merged = new Map(batch)
              for (const [id, at] of lastUsed) merged.set(id, at)
              lastUsed = merged
            })
          )
        )
      })
      yield* Effect.forkScoped(Effect.repeat(flush, Schedule.spaced(lastUsedFlushInterval)))
      yield* Effect.addFinalizer(() => flush)

      /**
       * A key the set of valid hashes had (a moment out of date) but the lookup refuses is counted now; one
       * it did not have was counted before the lookup.
       */
      const refuse = (reason: "unknown" | "revoked", scope: Scope, counted: boolean, address: string | undefined) =>
        counted
          ? Effect.fail(authRefused(reason, scope))
          : Effect.zipRight(Effect.ignore(throttle.reserveFailure("api_key", address)), Effect.fail(authRefused(reason, scope)))

      /** The key's checks at `now` (ms): an Effect only to count or release a failure; a valid key is one success. */
      const checkAt = (
        found: Option.Option<KeyWithWorkspace>,
        hash: Buffer,
        scope: Scope,
        counted: boolean,
        address: string | undefined,
        now: number
      ): Effect.Effect<Principal, AuthRefused> => {
        if (Option.isNone(found) || !sameHash(found.value.keyHash, hash)) return refuse("unknown", scope, counted, address)
        const key = found.value
        if (key.revoked) return refuse("revoked", scope, counted, address)
        // Past its expiry a key is refused like a revoked one (checked on every request: the lookup is cached).
        if (key.expiresAt !== undefined && key.expiresAt.getTime() <= now) return refuse("revoked", scope, counted, address)
        // Valid after all (made on another instance a moment ago): the failure counted before the lookup goes back.
        if (!key.scopes.includes(scope)) {
          const refused = Effect.fail(authRefused("scope", scope))
          return counted ? Effect.zipRight(throttle.releaseFailure("api_key", address), refused) : refused
        }
        lastUsed.set(key.keyId, new Date(now))
        const principal: Principal = { keyId: key.keyId, scopes: key.scopes, workspace: key.workspace, budget: key.budget }
        return counted ? Effect.as(throttle.releaseFailure("api_key", address), principal) : Effect.succeed(principal)
      }

      /** Looked up (or remembered), then checked at the time the lookup answered. */
      const check = (hashHex: string, hash: Buffer, scope: Scope, counted: boolean, address: string | undefined) =>
        Effect.flatMap(findKey(hashHex), (found) => checkAt(found, hash, scope, counted, address, clock.unsafeCurrentTimeMillis()))

      return {
        authenticate: (token, scope, address) => {
          if (token === undefined || token.trim() === "") return Effect.fail(authRefused("missing", scope))
          if (!isWellFormedApiKey(token)) {
            return Effect.zipRight(throttle.reserveFailure("api_key", address), Effect.fail(authRefused("malformed", scope)))
          }
          const hash = hashApiKey(token)
          const hashHex = hash.toString("hex")
          // A valid key costs one set lookup more than before, and never meets the throttle.
          if (keys.isKnownValid(hashHex)) {
            // Most requests: a key looked up a moment ago, checked without a lookup effect (one success, no clock step).
            const now = clock.unsafeCurrentTimeMillis()
            const remembered = findKey.remembered(hashHex, now)
            return remembered === undefined
              ? check(hashHex, hash, scope, false, address)
              : checkAt(remembered, hash, scope, false, address, now)
          }
          return Effect.zipRight(throttle.reserveFailure("api_key", address), check(hashHex, hash, scope, true, address))
        }
      }
    })
  )
}
