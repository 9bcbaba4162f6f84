import { Context, Data, Duration, Effect, Either, Layer, Option } from "effect"
import { AppConfig } from "../config"
import { credentialContext, type CredentialsKey, lastFour, openCredential, sealCredential } from "../domain/credentials"
import { expiringLookup } from "./expiringLookup"
import { type StoredProviderKey, ProviderKeys } from "./ProviderKeys"
import type { StorageFailure } from "./StorageFailure"

/** CREDENTIALS_KEY is not set: no provider key can be saved (there is no weak default to fall back on). */
export class CredentialsKeyMissing extends Data.TaggedError("CredentialsKeyMissing")<{}> {}

/** The provider refused the key when it was checked: it is not saved. */
export class ProviderKeyRejected extends Data.TaggedError("ProviderKeyRejected")<{
  readonly provider: string
  /** In the service's own words: the upstream's status, never its text. */
  readonly reason: string
}> {}

/** The provider could not be asked (down, timing out): the key is not saved, and may be tried again. */
export class ProviderKeyUncheckable extends Data.TaggedError("ProviderKeyUncheckable")<{
  readonly provider: string
  readonly reason: string
}> {}

/** A stored key that cannot be opened: sealed under a key no longer given, or changed. */
export class ProviderKeyUnreadable extends Data.TaggedError("ProviderKeyUnreadable")<{
  readonly provider: string
  readonly reason: "unknown_key" | "unreadable"
}> {}

/**
 * One cheap upstream call with a candidate key, before it is saved. Its real implementation lives on the
 * forwarding side (each provider knows its cheapest authenticated call); tests give their own.
 */
export class ProviderKeyCheck extends Context.Tag("ProviderKeyCheck")<ProviderKeyCheck, {
  readonly check: (provider: string, apiKey: string) => Effect.Effect<void, ProviderKeyRejected | ProviderKeyUncheckable>
}>() {}

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
  }) => Effect.Effect<ProviderKeyView, CredentialsKeyMissing | ProviderKeyRejected | ProviderKeyUncheckable | StorageFailure>
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<ProviderKeyView>, StorageFailure>
  readonly remove: (workspaceId: string, provider: string) => Effect.Effect<boolean, StorageFailure>
  /** The workspace's key for a provider, in the clear, for its upstream requests; None when it has none. */
  readonly keyFor: (workspaceId: string, provider: string) => Effect.Effect<Option.Option<string>, ProviderKeyUnreadable | StorageFailure>
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

      // Looked up on every forwarded request of a workspace: kept a second, as API keys are.
      const opened = expiringLookup({
        lookup: (id: string) => {
          const [workspaceId, provider] = id.split("/") as [string, string]
          return Effect.flatMap(store.get(workspaceId, provider), (found) =>
            Option.match(found, {
              onNone: () => Effect.succeed(Option.none<string>()),
              onSome: (key) => Effect.map(open(key), Option.some)
            }))
        },
        timeToLive: openedKeyTtl,
        capacity: 10_000
      })

      const now = Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (ms) => new Date(ms))

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
        remove: (workspaceId, provider) => store.remove(workspaceId, provider),
        keyFor: (workspaceId, provider) => opened(`${workspaceId}/${provider}`),
        markUsed: (workspaceId, provider) => Effect.flatMap(now, (at) => store.markUsed(workspaceId, provider, at)),
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
