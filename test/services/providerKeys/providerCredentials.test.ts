import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../../../src/config"
import { type CredentialsKey, parseCredentialsKey } from "../../../src/domain/credentials"
import { ProviderCredentials } from "../../../src/services/providerKeys/ProviderCredentials"
import { ProviderKeyCheck, ProviderKeyRejected, ProviderKeyUncheckable } from "../../../src/services/providerKeys/ProviderKeyCheck"
import { ProviderKeys } from "../../../src/services/providerKeys/ProviderKeys"

const keyA = Either.getOrThrow(parseCredentialsKey("a1".repeat(32)))
const keyB = Either.getOrThrow(parseCredentialsKey("b2".repeat(32)))
const workspaceId = "6f1c2b3a-0000-4000-8000-000000000001"
const otherWorkspaceId = "6f1c2b3a-0000-4000-8000-000000000002"

/** The provider accepts keys starting "good-", refuses "bad-" ones, and cannot be reached for "down-" ones. */
const check = Layer.succeed(ProviderKeyCheck, {
  check: (provider, apiKey) =>
    apiKey.startsWith("good-") ? Effect.void
    : apiKey.startsWith("down-") ? Effect.fail(new ProviderKeyUncheckable({ provider, reason: "timeout" }))
    : Effect.fail(new ProviderKeyRejected({ provider, reason: "the provider answered 401" }))
})

/** ProviderCredentials with these CREDENTIALS_KEY / CREDENTIALS_KEY_PREVIOUS, over the ProviderKeys in context. */
const credentials = (current: CredentialsKey | undefined, previous?: CredentialsKey) =>
  ProviderCredentials.layer.pipe(
    Layer.provide(check),
    Layer.provide(
      AppConfig.layerWith({ credentialsKeys: { current: Option.fromNullable(current), previous: Option.fromNullable(previous) } }).pipe(
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
      )
    )
  )

const stored = Effect.flatMap(ProviderKeys, (keys) => keys.list(workspaceId))

describe("ProviderCredentials", () => {
  it.effect("seals a checked key, shows only its last four characters, and opens it for its own workspace only", () =>
    Effect.gen(function*() {
      const view = yield* Effect.flatMap(ProviderCredentials, (c) =>
        c.set({ workspaceId, provider: "provider_a", apiKey: "good-key-of-workspace-9876", actor: "operator" }))
      expect(view).toMatchObject({ provider: "provider_a", last4: "9876", createdBy: "operator", lastUsedAt: null, lastError: null })
      expect(JSON.stringify(view)).not.toContain("good-key")
      const [row] = yield* stored
      expect(row!.sealed).not.toContain("good-key")
      expect(row!.sealedWith).toBe(keyA.id)
      const c = yield* ProviderCredentials
      expect(Option.map(yield* c.keyFor(workspaceId, "provider_a"), Redacted.value)).toEqual(Option.some("good-key-of-workspace-9876"))
      expect(yield* c.keyFor(workspaceId, "provider_b")).toEqual(Option.none())
      expect(yield* c.keyFor(otherWorkspaceId, "provider_a")).toEqual(Option.none())
    }).pipe(Effect.provide(credentials(keyA)), Effect.provide(ProviderKeys.memory)))

  it.effect("saves nothing without CREDENTIALS_KEY, or when the provider refuses the key or cannot be asked", () =>
    Effect.gen(function*() {
      const attempt = (apiKey: string, layer: Layer.Layer<ProviderCredentials, unknown, ProviderKeys>) =>
        Effect.flip(Effect.flatMap(ProviderCredentials, (c) => c.set({ workspaceId, provider: "provider_b", apiKey, actor: "a@example.com" }))).pipe(
          Effect.provide(layer),
          Effect.map((e) => e._tag)
        )
      expect(yield* attempt("good-key-0000", credentials(undefined))).toBe("CredentialsKeyMissing")
      expect(yield* attempt("bad-key-0000", credentials(keyA))).toBe("ProviderKeyRejected")
      expect(yield* attempt("down-key-0000", credentials(keyA))).toBe("ProviderKeyUncheckable")
      expect(yield* stored).toEqual([])
    }).pipe(Effect.provide(ProviderKeys.memory)))

  it.effect("rotates: keys sealed under the previous CREDENTIALS_KEY are re-sealed under the new one", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(ProviderCredentials, (c) =>
        Effect.all([
          c.set({ workspaceId, provider: "provider_a", apiKey: "good-a-1111", actor: "operator" }),
          c.set({ workspaceId, provider: "provider_c", apiKey: "good-c-2222", actor: "operator" })
        ])).pipe(Effect.provide(credentials(keyA)))
      // Only the new key: what was sealed under the old one cannot be opened.
      const withoutPrevious = yield* Effect.flip(Effect.flatMap(ProviderCredentials, (c) => c.keyFor(workspaceId, "provider_a"))).pipe(
        Effect.provide(credentials(keyB))
      )
      expect(withoutPrevious).toMatchObject({ _tag: "ProviderKeyUnreadable", reason: "unknown_key" })
      const result = yield* Effect.flatMap(ProviderCredentials, (c) => c.rotate).pipe(Effect.provide(credentials(keyB, keyA)))
      expect(result).toEqual({ resealed: 2, unreadable: [] })
      expect((yield* stored).map((k) => k.sealedWith)).toEqual([keyB.id, keyB.id])
      const opened = yield* Effect.flatMap(ProviderCredentials, (c) =>
        Effect.all([c.keyFor(workspaceId, "provider_a"), c.keyFor(workspaceId, "provider_c")])).pipe(Effect.provide(credentials(keyB)))
      expect(opened.map(Option.map(Redacted.value))).toEqual([Option.some("good-a-1111"), Option.some("good-c-2222")])
      // Run again: nothing left to do.
      expect(yield* Effect.flatMap(ProviderCredentials, (c) => c.rotate).pipe(Effect.provide(credentials(keyB, keyA)))).toEqual({
        resealed: 0,
        unreadable: []
      })
    }).pipe(Effect.provide(ProviderKeys.memory)))

  it.effect("reports keys a rotation cannot open and leaves them as they were", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(ProviderCredentials, (c) => c.set({ workspaceId, provider: "provider_a", apiKey: "good-a-1111", actor: "operator" })).pipe(
        Effect.provide(credentials(keyA))
      )
      const before = yield* stored
      // Rotating to B without giving A: A's keys cannot be opened.
      const result = yield* Effect.flatMap(ProviderCredentials, (c) => c.rotate).pipe(Effect.provide(credentials(keyB)))
      expect(result).toEqual({ resealed: 0, unreadable: [{ workspaceId, provider: "provider_a" }] })
      expect(yield* stored).toEqual(before)
    }).pipe(Effect.provide(ProviderKeys.memory)))
})
