import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { type NewProviderKey, ProviderKeys } from "../../src/services/providerKeys/ProviderKeys"
import { Workspaces } from "../../src/services/workspaces/Workspaces"

/** The behaviour every backing of ProviderKeys must have: run on `.memory` and on `.layer` (PostgreSQL). */
export const providerKeysContract = <E>(backing: string, layer: Layer.Layer<ProviderKeys | Workspaces, E>) =>
  describe(`ProviderKeys (${backing})`, () => {
    const workspace = Effect.flatMap(Workspaces, (workspaces) => workspaces.create("provider keys contract", {}))
    const keyFor = (workspaceId: string, provider: string, sealed = `v1.key1.iv.${provider}`): NewProviderKey => ({
      workspaceId,
      provider,
      sealed,
      sealedWith: sealed.split(".")[1]!,
      last4: "1234",
      createdBy: "operator"
    })

    it.effect("keeps a key per workspace and provider, listed by provider, with nothing used or refused yet", () =>
      Effect.gen(function*() {
        const keys = yield* ProviderKeys
        const [one, other] = [yield* workspace, yield* workspace]
        const saved = yield* keys.put(keyFor(one.id, "provider_b"))
        yield* keys.put(keyFor(one.id, "provider_a"))
        yield* keys.put(keyFor(other.id, "provider_a", "v1.key1.iv.other"))
        expect(saved).toMatchObject({ provider: "provider_b", last4: "1234", createdBy: "operator", lastUsedAt: null, lastError: null })
        expect(saved.createdAt).toBeInstanceOf(Date)
        expect((yield* keys.list(one.id)).map((k) => k.provider)).toEqual(["provider_a", "provider_b"])
        expect((yield* keys.list(other.id)).map((k) => k.sealed)).toEqual(["v1.key1.iv.other"])
        expect(Option.map(yield* keys.get(one.id, "provider_b"), (k) => k.sealed)).toEqual(Option.some("v1.key1.iv.provider_b"))
        expect(Option.isNone(yield* keys.get(one.id, "provider_c"))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("records use (never going back in time) and the last refusal; a new key forgets both", () =>
      Effect.gen(function*() {
        const keys = yield* ProviderKeys
        const { id } = yield* workspace
        yield* keys.put(keyFor(id, "provider_a"))
        const [early, late] = [new Date("2026-11-01T10:00:00Z"), new Date("2026-11-01T11:00:00Z")]
        yield* keys.markUsed(id, "provider_a", late)
        yield* keys.markUsed(id, "provider_a", early)
        yield* keys.recordError(id, "provider_a", "The provider refused the workspace's key (401).", early)
        const used = Option.getOrThrow(yield* keys.get(id, "provider_a"))
        expect(used.lastUsedAt?.toISOString()).toBe(late.toISOString())
        expect(used.lastError).toBe("The provider refused the workspace's key (401).")
        expect(used.lastErrorAt?.toISOString()).toBe(early.toISOString())
        const replaced = yield* keys.put({ ...keyFor(id, "provider_a", "v1.key1.iv.new"), last4: "9876", createdBy: "admin@example.com" })
        expect(replaced).toMatchObject({ sealed: "v1.key1.iv.new", last4: "9876", createdBy: "admin@example.com", lastUsedAt: null, lastError: null, lastErrorAt: null })
        expect(yield* keys.list(id)).toHaveLength(1)
        // Use or errors of a provider without a key change nothing.
        yield* keys.markUsed(id, "provider_c", late)
        expect(Option.isNone(yield* keys.get(id, "provider_c"))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("removes a key once", () =>
      Effect.gen(function*() {
        const keys = yield* ProviderKeys
        const { id } = yield* workspace
        yield* keys.put(keyFor(id, "provider_c"))
        expect(Option.map(yield* keys.remove(id, "provider_c"), (k) => k.provider)).toEqual(Option.some("provider_c"))
        expect(Option.isNone(yield* keys.remove(id, "provider_c"))).toBe(true)
        expect(yield* keys.list(id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("finds what a rotation has left and reseals only the text it read", () =>
      Effect.gen(function*() {
        const keys = yield* ProviderKeys
        const { id } = yield* workspace
        yield* keys.put(keyFor(id, "provider_a", "v1.oldkey.iv.a"))
        yield* keys.put(keyFor(id, "provider_b", "v1.newkey.iv.b"))
        const left = (yield* keys.sealedOtherThan("newkey")).filter((k) => k.workspaceId === id)
        expect(left.map((k) => k.provider)).toEqual(["provider_a"])
        expect(yield* keys.reseal(left[0]!, { sealed: "v1.newkey.iv.a2", sealedWith: "newkey" })).toBe(true)
        // Read before a concurrent save replaced it: the newer key wins.
        expect(yield* keys.reseal(left[0]!, { sealed: "v1.newkey.iv.stale", sealedWith: "newkey" })).toBe(false)
        expect(Option.map(yield* keys.get(id, "provider_a"), (k) => [k.sealed, k.sealedWith])).toEqual(Option.some(["v1.newkey.iv.a2", "newkey"]))
        expect((yield* keys.sealedOtherThan("newkey")).filter((k) => k.workspaceId === id)).toEqual([])
      }).pipe(Effect.provide(layer)))
  })
