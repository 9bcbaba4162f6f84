import { Context, Data, Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../../config"
import { credentialContext, type CredentialsKey, lastFour, openCredential, sealCredential } from "../../domain/credentials"
import { expiringLookup } from "../../platform/expiringLookup"
import { ProviderKeyCheck, type ProviderKeyRejected, type ProviderKeyUncheckable, type ProviderKeyUnroutable } from "./ProviderKeyCheck"
import { type StoredProviderKey, ProviderKeys } from "./ProviderKeys"
import type { StorageFailure } from "../../platform/StorageFailure"

/** CREDENTIALS_KEY is not set: no provider key can be saved (there is no weak default to fall back on). */
export class CredentialsKeyMissing extends Data.TaggedError("CredentialsKeyMissing")<{}> {}

/** A stored key that cannot be opened: sealed under a key no longer given, or changed. */
export class ProviderKeyUnreadable extends Data.TaggedError("ProviderKeyUnreadable")<{
  readonly provider: string
  readonly reason: "unknown_key" | "unreadable"
}> {}

/** What is shown of a saved key: never the key, only its last four characters and its history. */
export interface ProviderKeyView {
  readonly provider: string
  readonly last4: string
  readonly createdAt: Date
  readonly createdBy: string
  readonly lastUsedAt: Date | null
  readonly lastError: string | null
}

export const providerKeyView = (key: StoredProviderKey): ProviderKeyView => ({
  provider: key.provider,
  last4: key.last4,
  createdAt: key.createdAt,
  createdBy: key.createdBy,
  lastUsedAt: key.lastUsedAt,
  lastError: key.lastError
})

/** What a rotation did: keys resealed under CREDENTIALS_KEY, and those it could not open (left as they were). */
export interface RotationResult {
  readonly resealed: number
  readonly unreadable: ReadonlyArray<{ readonly workspaceId: string; readonly provider: string }>
}

const markUsedEvery = 60_000

/** How long an opened key is trusted: a replaced or removed key stops being used within this time on every instance. */
export const openedKeyTtl = Duration.seconds(1)

/**
 * Customer-supplied provider keys: sealed with CREDENTIALS_KEY before they are stored, checked with the
 * provider before they are saved, opened for the requests of their workspace, re-sealed on rotation.
 */
export class ProviderCredentials extends Context.Tag("ProviderCredentials")<ProviderCredentials, {
  readonly set: (input: {
    readonly workspaceId: string
    readonly provider: string
    readonly apiKey: string
    readonly actor: string
  }) => Effect.Effect<ProviderKeyView, CredentialsKeyMissing | ProviderKeyRejected | ProviderKeyUnroutable | ProviderKeyUncheckable | StorageFailure>
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<ProviderKeyView>, StorageFailure>
  /** The removed key's view, if there was one. */
  readonly remove: (workspaceId: string, provider: string) => Effect.Effect<Option.Option<ProviderKeyView>, StorageFailure>
  /** The workspace's key for a provider, for its upstream requests; None when it has none. */
  readonly keyFor: (
    workspaceId: string,
    provider: string
  ) => Effect.Effect<Option.Option<Redacted.Redacted<string>>, ProviderKeyUnreadable | StorageFailure>
  /** Notes that the key was used now (written at most once a minute per key and instance). */
  readonly markUsed: (workspaceId: string, provider: string) => Effect.Effect<void, StorageFailure>
  /** Remembers the provider's refusal of the workspace's key, shown with the key. */
  readonly recordRefusal: (workspaceId: string, provider: string, reason: string) => Effect.Effect<void, StorageFailure>
  /** Re-seals every key under CREDENTIALS_KEY, opening with CREDENTIALS_KEY_PREVIOUS what it sealed. */
  readonly rotate: Effect.Effect<RotationResult, CredentialsKeyMissing | StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    ProviderCredentials,
    Effect.gen(function*() {
      const store = yield* ProviderKeys
      const checker = yield* ProviderKeyCheck
      const { credentialsKeys } = yield* AppConfig
      const current: Option.Option<CredentialsKey> = credentialsKeys.current
      const keyring = [...Option.toArray(credentialsKeys.current), ...Option.toArray(credentialsKeys.previous)]
      const sealingKey = Option.match(current, { onNone: () => Effect.fail(new CredentialsKeyMissing()), onSome: Effect.succeed })

      const open = (key: StoredProviderKey) =>
        Either.mapLeft(
          openCredential(keyring, key.sealed, credentialContext(key.workspaceId, key.provider)),
          (reason) => new ProviderKeyUnreadable({ provider: key.provider, reason })
        )

      // Read synchronously on the hot path (the test clock in tests: the layer is built under it).
      const clock = yield* Effect.clock
      // Looked up on every forwarded request of a workspace: kept a second, as API keys are.
      const opened = expiringLookup({
        lookup: (id: string) => {
          const [workspaceId, provider] = id.split("/") as [string, string]
          return Effect.flatMap(store.get(workspaceId, provider), (found) =>
            Option.match(found, {
              onNone: () => Effect.succeed(Option.none<Redacted.Redacted<string>>()),
              onSome: (key) => Effect.map(open(key), (plain) => Option.some(Redacted.make(plain)))
            }))
        },
        timeToLive: openedKeyTtl,
        capacity: 10_000
      })

      const now = Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (ms) => new Date(ms))
      // Last-used times are for people: a write a minute per key is plenty, not one per request.
      const lastMarked = new Map<string, number>()

      return {
        set: ({ actor, apiKey, provider, workspaceId }) =>
          Effect.gen(function*() {
            const key = yield* sealingKey
            yield* checker.check(provider, apiKey)
            const saved = yield* store.put({
              workspaceId,
              provider,
              sealed: sealCredential(key, apiKey, credentialContext(workspaceId, provider)),
              sealedWith: key.id,
              last4: lastFour(apiKey),
              createdBy: actor
            })
            return providerKeyView(saved)
          }),
        list: (workspaceId) => Effect.map(store.list(workspaceId), (keys) => keys.map(providerKeyView)),
        remove: (workspaceId, provider) => Effect.map(store.remove(workspaceId, provider), Option.map(providerKeyView)),
        keyFor: (workspaceId, provider) => {
          // Most requests: a key (or its absence) looked up a moment ago, one success without a clock step.
          const id = `${workspaceId}/${provider}`
          const remembered = opened.remembered(id, clock.unsafeCurrentTimeMillis())
          return remembered === undefined ? opened(id) : Effect.succeed(remembered)
        },
        markUsed: (workspaceId, provider) =>
          Effect.flatMap(now, (at) => {
            const id = `${workspaceId}/${provider}`
            if (at.getTime() - (lastMarked.get(id) ?? -Infinity) < markUsedEvery) return Effect.void
            lastMarked.set(id, at.getTime())
            return store.markUsed(workspaceId, provider, at)
          }),
        recordRefusal: (workspaceId, provider, reason) => Effect.flatMap(now, (at) => store.recordError(workspaceId, provider, reason, at)),
        rotate: Effect.gen(function*() {
          const key = yield* sealingKey
          const left = yield* store.sealedOtherThan(key.id)
          let resealed = 0
          const unreadable: Array<{ workspaceId: string; provider: string }> = []
          for (const stored of left) {
            const plain = open(stored)
            if (Either.isLeft(plain)) {
              unreadable.push({ workspaceId: stored.workspaceId, provider: stored.provider })
              continue
            }
            const sealed = sealCredential(key, plain.right, credentialContext(stored.workspaceId, stored.provider))
            if (yield* store.reseal(stored, { sealed, sealedWith: key.id })) resealed++
          }
          return { resealed, unreadable }
        })
      }
    })
  )
}
