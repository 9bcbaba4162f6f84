import { expect, type Vitest } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as crypto from "node:crypto"
import { displayPrefix, hashApiKey } from "../../src/domain/apiKey"
import { ApiKeys } from "../../src/services/identity/ApiKeys"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { uniqueName } from "./workspaces"

/** The behaviour both backings of ApiKeys must show. */
export const apiKeysContract = (it: Vitest.MethodsNonLive<ApiKeys | Workspaces, true>) => {
  const workspace = Effect.flatMap(Workspaces, (workspaces) => workspaces.create(uniqueName("Keys"), {}))

  it.effect("creates keys whose plaintext is given once and lists them in creation order", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const { id } = yield* workspace
      const first = yield* keys.create(id, "first", ["COMPLETION_API"])
      const second = yield* keys.create(id, "second", ["USAGE_EXPORT_API", "COMPLETION_API"], { label: "ops@example.com" })
      expect(first.key).toMatch(/^wsk_/)
      expect(first.record).toMatchObject({
        workspaceId: id,
        name: "first",
        scopes: ["COMPLETION_API"],
        createdBy: "operator",
        createdByPerson: Option.none(),
        revokedAt: Option.none(),
        lastUsedAt: Option.none()
      })
      expect(first.record.displayPrefix).toBe(displayPrefix(first.key))
      expect(second.record.createdBy).toBe("ops@example.com")
      expect(yield* keys.list(id)).toEqual([first.record, second.record])
      expect((yield* Effect.flip(keys.create(crypto.randomUUID(), "k", [])))._tag).toBe("WorkspaceNotFound")
      expect((yield* Effect.flip(keys.list(crypto.randomUUID())))._tag).toBe("WorkspaceNotFound")
    }))

  it.effect("finds a key by the hash of its plaintext, with its workspace", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const owner = yield* workspace
      const { key, record } = yield* keys.create(owner.id, "k", ["COMPLETION_API"])
      const found = Option.getOrThrow(yield* keys.findByHash(hashApiKey(key)))
      expect(found).toMatchObject({ keyId: record.id, scopes: ["COMPLETION_API"], revoked: false, workspace: owner })
      expect(Buffer.from(found.keyHash).equals(hashApiKey(key))).toBe(true)
      expect(yield* keys.findByHash(hashApiKey(`${key}x`))).toEqual(Option.none())
    }))

  it.effect("revokes once: the first revocation time stays, and only within the key's workspace", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const owner = yield* workspace
      const other = yield* workspace
      const { key, record } = yield* keys.create(owner.id, "k", ["COMPLETION_API"])
      expect((yield* Effect.flip(keys.revoke(other.id, record.id)))._tag).toBe("ApiKeyNotFound")
      expect((yield* Effect.flip(keys.revoke(owner.id, "not-a-uuid")))._tag).toBe("ApiKeyNotFound")
      expect((yield* Effect.flip(keys.revoke(crypto.randomUUID(), record.id)))._tag).toBe("WorkspaceNotFound")
      const revoked = yield* keys.revoke(owner.id, record.id)
      expect(Option.isSome(revoked.revokedAt)).toBe(true)
      const again = yield* keys.revoke(owner.id, record.id)
      expect(again.revokedAt).toEqual(revoked.revokedAt)
      expect(Option.getOrThrow(yield* keys.findByHash(hashApiKey(key))).revoked).toBe(true)
    }))

  it.effect("records last-used times in a batch and never moves one backwards", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const { id } = yield* workspace
      const a = (yield* keys.create(id, "a", ["COMPLETION_API"])).record
      const b = (yield* keys.create(id, "b", ["COMPLETION_API"])).record
      const later = new Date("2030-01-02T03:04:05.000Z")
      const earlier = new Date("2030-01-01T00:00:00.000Z")
      yield* keys.recordLastUsed(new Map())
      yield* keys.recordLastUsed(new Map([[a.id, later], [b.id, earlier], [crypto.randomUUID(), later]]))
      yield* keys.recordLastUsed(new Map([[a.id, earlier]]))
      const listed = yield* keys.list(id)
      expect(listed.map((k) => Option.map(k.lastUsedAt, (at) => at.toISOString()))).toEqual([
        Option.some(later.toISOString()),
        Option.some(earlier.toISOString())
      ])
    }))

  it.effect("knows from memory which key hashes are valid: created is, revoked or never issued is not", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const { id } = yield* workspace
      const { key, record } = yield* keys.create(id, "k", ["COMPLETION_API"])
      const hex = hashApiKey(key).toString("hex")
      expect(keys.isKnownValid(hex)).toBe(true)
      expect(keys.isKnownValid(hashApiKey(`${key}x`).toString("hex"))).toBe(false)
      yield* keys.revoke(id, record.id)
      expect(keys.isKnownValid(hex)).toBe(false)
    }))

  it.effect("keeps a key's budget and expiry, changes or removes them, and refuses an expiry already past at creation", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const { id } = yield* workspace
      const budget = { amountUsd: 25, period: "week" as const, alertThresholds: [0.8, 1] }
      const expiresAt = new Date(Date.now() + 3_600_000)
      const { key, record } = yield* keys.create(id, "capped", ["COMPLETION_API"], undefined, { budget, expiresAt })
      expect(record.budget).toEqual(Option.some(budget))
      expect(Option.map(record.expiresAt, (at) => at.getTime())).toEqual(Option.some(expiresAt.getTime()))
      const found = Option.getOrThrow(yield* keys.findByHash(hashApiKey(key)))
      expect(found.budget).toEqual(budget)
      expect(found.expiresAt?.getTime()).toBe(expiresAt.getTime())
      // Absent leaves a field, null removes it.
      const changed = yield* keys.update(id, record.id, { budget: { amountUsd: 5, period: "day" } })
      expect(changed.budget).toEqual(Option.some({ amountUsd: 5, period: "day" }))
      expect(Option.isSome(changed.expiresAt)).toBe(true)
      const cleared = yield* keys.update(id, record.id, { budget: null, expiresAt: null })
      expect(cleared.budget).toEqual(Option.none())
      expect(cleared.expiresAt).toEqual(Option.none())
      // An expiry moved into the past: the key is no longer known valid.
      const hex = hashApiKey(key).toString("hex")
      expect(keys.isKnownValid(hex)).toBe(true)
      yield* keys.update(id, record.id, { expiresAt: new Date(Date.now() - 1_000) })
      expect(keys.isKnownValid(hex)).toBe(false)
      const past = yield* Effect.flip(keys.create(id, "stale", ["COMPLETION_API"], undefined, { expiresAt: new Date(Date.now() - 1_000) }))
      expect(past._tag).toBe("KeyExpiryInPast")
      expect((yield* Effect.flip(keys.update(id, crypto.randomUUID(), { budget: null })))._tag).toBe("ApiKeyNotFound")
    }))
}
