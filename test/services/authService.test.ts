import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { hashApiKey, sameHash } from "../../src/domain/apiKey"
import { ApiKeys } from "../../src/services/ApiKeys"
import { AuthService } from "../../src/services/AuthService"
import { Workspaces } from "../../src/services/Workspaces"

const Services = AuthService.layer.pipe(Layer.provideMerge(ApiKeys.memory), Layer.provideMerge(Workspaces.memory))

describe("AuthService (in-memory layers)", () => {
  it.scoped("admits a key with the scope and names the reason otherwise", () =>
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const keys = yield* ApiKeys
      const auth = yield* AuthService
      const workspace = yield* workspaces.create("Acme", {})
      const { key, record } = yield* keys.create(workspace.id, "k", ["COMPLETION_API"])

      const principal = yield* auth.authenticate(key, "COMPLETION_API")
      expect(principal).toMatchObject({ keyId: record.id, workspace: { id: workspace.id } })

      const reasons = yield* Effect.all([
        auth.authenticate(undefined, "COMPLETION_API"),
        auth.authenticate("  ", "COMPLETION_API"),
        auth.authenticate("sk-something", "COMPLETION_API"),
        auth.authenticate(`wsk_${"B".repeat(43)}`, "COMPLETION_API"),
        auth.authenticate(key, "USAGE_EXPORT_API")
      ].map((attempt) => Effect.flip(attempt)))
      expect(reasons.map((failure) => failure._tag === "AuthFailure" ? failure.reason : failure._tag)).toEqual([
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
      yield* auth.authenticate(key, "USAGE_EXPORT_API")
      yield* keys.revoke(workspace.id, record.id)
      // Still cached: the answer may be up to a second old.
      yield* auth.authenticate(key, "USAGE_EXPORT_API")
      yield* TestClock.adjust("1001 millis")
      const failure = yield* Effect.flip(auth.authenticate(key, "USAGE_EXPORT_API"))
      expect(failure._tag === "AuthFailure" && failure.reason).toBe("revoked")
    }).pipe(Effect.provide(Services)))

  it.scoped("writes last-used times in a batch, not per request", () =>
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const keys = yield* ApiKeys
      const auth = yield* AuthService
      const workspace = yield* workspaces.create("Acme", {})
      const { key, record } = yield* keys.create(workspace.id, "k", ["USAGE_EXPORT_API"])
      yield* auth.authenticate(key, "USAGE_EXPORT_API")
      const lastUsed = Effect.map(keys.list(workspace.id), (list) => list.find((k) => k.id === record.id)!.lastUsedAt)
      expect(Option.isNone(yield* lastUsed)).toBe(true)
      yield* TestClock.adjust("5 seconds")
      expect(Option.isSome(yield* lastUsed)).toBe(true)
    }).pipe(Effect.provide(Services)))

  it("compares hashes without depending on where they differ", () => {
    const a = hashApiKey("wsk_a")
    expect(sameHash(a, hashApiKey("wsk_a"))).toBe(true)
    expect(sameHash(a, hashApiKey("wsk_b"))).toBe(false)
    expect(sameHash(a, a.subarray(0, 16))).toBe(false)
  })
})
