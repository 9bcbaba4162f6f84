import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Ref, TestClock } from "effect"
import { hashApiKey, sameHash } from "../../../src/domain/apiKey"
import { ApiKeys } from "../../../src/services/identity/ApiKeys"
import { AuthService } from "../../../src/services/identity/AuthService"
import { CredentialThrottle } from "../../../src/services/identity/CredentialThrottle/index"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"

const limits = { limit: 3, networkLimit: 5, globalLimit: 8, windowSeconds: 60 }
const address = "203.0.113.7"

/** The in-memory key store, counting the lookups it answers. */
class Lookups extends Context.Tag("Lookups")<Lookups, Ref.Ref<number>>() {}
const CountedKeys = Layer.effect(
  ApiKeys,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const lookups = yield* Lookups
    return ApiKeys.of({ ...keys, findByHash: (hash) => Effect.zipRight(Ref.update(lookups, (n) => n + 1), keys.findByHash(hash)) })
  })
).pipe(Layer.provide(ApiKeys.memory), Layer.provideMerge(Layer.effect(Lookups, Ref.make(0))))

const Services = AuthService.layer.pipe(
  Layer.provideMerge(CredentialThrottle.memory(limits)),
  Layer.provideMerge(CountedKeys),
  Layer.provideMerge(Workspaces.memory)
)

describe("AuthService (in-memory layers)", () => {
  it.scoped("admits a key with the scope and names the reason otherwise", () =>
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const keys = yield* ApiKeys
      const auth = yield* AuthService
      const workspace = yield* workspaces.create("Acme", {})
      const { key, record } = yield* keys.create(workspace.id, "k", ["COMPLETION_API"])

      const principal = yield* auth.authenticate(key, "COMPLETION_API", address)
      expect(principal).toMatchObject({ keyId: record.id, workspace: { id: workspace.id } })

      const reasons = yield* Effect.all([
        auth.authenticate(undefined, "COMPLETION_API", address),
        auth.authenticate("  ", "COMPLETION_API", address),
        auth.authenticate("sk-something", "COMPLETION_API", address),
        auth.authenticate(`wsk_${"B".repeat(43)}`, "COMPLETION_API", address),
        auth.authenticate(key, "USAGE_EXPORT_API", address)
      ].map((attempt) => Effect.flip(attempt)))
      expect(reasons.map((failure) => failure._tag === "AuthRefused" ? failure.reason : failure._tag)).toEqual([
        "missing",
        "missing",
        "malformed",
        "unknown",
        "scope"
      ])
    }).pipe(Effect.provide(Services)))

  it.scoped("notices revocation once the cached lookup expires, within a second", () =>
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const keys = yield* ApiKeys
      const auth = yield* AuthService
      const workspace = yield* workspaces.create("Acme", {})
      const { key, record } = yield* keys.create(workspace.id, "k", ["USAGE_EXPORT_API"])
      yield* auth.authenticate(key, "USAGE_EXPORT_API", address)
      yield* keys.revoke(workspace.id, record.id)
      // Still cached: the answer may be up to a second old.
      yield* auth.authenticate(key, "USAGE_EXPORT_API", address)
      yield* TestClock.adjust("1001 millis")
      const failure = yield* Effect.flip(auth.authenticate(key, "USAGE_EXPORT_API", address))
      expect(failure._tag === "AuthRefused" && failure.reason).toBe("revoked")
    }).pipe(Effect.provide(Services)))

  it.scoped("writes last-used times in a batch, not per request", () =>
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const keys = yield* ApiKeys
      const auth = yield* AuthService
      const workspace = yield* workspaces.create("Acme", {})
      const { key, record } = yield* keys.create(workspace.id, "k", ["USAGE_EXPORT_API"])
      yield* auth.authenticate(key, "USAGE_EXPORT_API", address)
      const lastUsed = Effect.map(keys.list(workspace.id), (list) => list.find((k) => k.id === record.id)!.lastUsedAt)
      expect(Option.isNone(yield* lastUsed)).toBe(true)
      yield* TestClock.adjust("5 seconds")
      expect(Option.isSome(yield* lastUsed)).toBe(true)
    }).pipe(Effect.provide(Services)))

  it.scoped("past the limit, refuses a key not known to be valid without a lookup, and never a valid one", () =>
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const keys = yield* ApiKeys
      const auth = yield* AuthService
      const lookups = yield* Lookups
      const workspace = yield* workspaces.create("Acme", {})
      const valid = (yield* keys.create(workspace.id, "valid", ["COMPLETION_API"])).key
      const stale = yield* keys.create(workspace.id, "stale", ["COMPLETION_API"])
      yield* keys.revoke(workspace.id, stale.record.id)
      const outcome = (token: string | undefined, scope: "COMPLETION_API" | "USAGE_EXPORT_API" = "COMPLETION_API") =>
        auth.authenticate(token, scope, address).pipe(
          Effect.match({ onFailure: (e) => (e._tag === "AuthRefused" ? e.reason : e._tag), onSuccess: () => "ok" })
        )
      // Neither no key nor a valid key without the scope is a failure: they never spend the limit.
      for (let i = 0; i < 5; i++) expect(yield* outcome(undefined)).toBe("missing")
      for (let i = 0; i < 5; i++) expect(yield* outcome(valid, "USAGE_EXPORT_API")).toBe("scope")
      // Three failures (a revoked key, a guess, not even a key), then refusals without any lookup.
      expect([yield* outcome(stale.key), yield* outcome(`wsk_${"B".repeat(43)}`), yield* outcome("sk-not-ours")]).toEqual([
        "revoked",
        "unknown",
        "malformed"
      ])
      const before = yield* Ref.get(lookups)
      expect(yield* outcome(stale.key)).toBe("CredentialsThrottled")
      expect(yield* outcome(`wsk_${"C".repeat(43)}`)).toBe("CredentialsThrottled")
      expect(yield* Ref.get(lookups)).toBe(before)
      // The valid key from the same address passes, as often as it likes.
      for (let i = 0; i < 10; i++) expect(yield* outcome(valid)).toBe("ok")
      // Another address is not concerned; the window's end forgives.
      expect(yield* Effect.flip(auth.authenticate(stale.key, "COMPLETION_API", "198.51.100.1"))).toMatchObject({ reason: "revoked" })
      yield* TestClock.adjust("60 seconds")
      expect(yield* outcome(stale.key)).toBe("revoked")
    }).pipe(Effect.provide(Services)))

  it("compares hashes without depending on where they differ", () => {
    const a = hashApiKey("wsk_a")
    expect(sameHash(a, hashApiKey("wsk_a"))).toBe(true)
    expect(sameHash(a, hashApiKey("wsk_b"))).toBe(false)
    expect(sameHash(a, a.subarray(0, 16))).toBe(false)
  })
})
