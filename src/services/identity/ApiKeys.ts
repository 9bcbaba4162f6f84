import { SqlClient } from "@effect/sql"
import { Context, Data, Effect, Layer, Option, Ref } from "effect"
import * as crypto from "node:crypto"
import { displayPrefix, generateApiKey, hashApiKey, type Scope } from "../../domain/apiKey"
import { WorkspaceNotFound, Workspaces, isUuid } from "../workspaces/Workspaces"
import { StorageFailure } from "../../platform/StorageFailure"
import { validKeyHashesFromDatabase, validKeyHashesInMemory } from "./validKeyHashes"
import { type Workspace } from "../../domain/workspace"
import { StoredWorkspaceSettings } from "../../domain/workspaceSettings"
import { Schema } from "effect"
import { Budget } from "../../domain/budgets"

export interface ApiKeyRecord {
  readonly id: string
  readonly workspaceId: string
  readonly name: string
  readonly displayPrefix: string
  readonly scopes: ReadonlyArray<Scope>
  readonly createdAt: Date
  readonly revokedAt: Option.Option<Date>
  readonly lastUsedAt: Option.Option<Date>
  /** Who created the key: "operator" or a person's email. */
  readonly createdBy: string
  /** The person who created it, when it was a person (members see and revoke only their own keys). */
  readonly createdByPerson: Option.Option<string>
  /** The key's own spend cap (docs/budgets.md). */
  readonly budget: Option.Option<Budget>
  /** After it the key is refused like a revoked one. */
  readonly expiresAt: Option.Option<Date>
}

/** A key's budget and expiry: at creation, or changed (null: removed; absent: unchanged). */
export interface KeyLimits {
  readonly budget?: Budget | null | undefined
  readonly expiresAt?: Date | null | undefined
}

/** Who creates a key; the admin API and the CLI create keys as the operator. */
export interface KeyCreator {
  readonly label: string
  readonly personId?: string | undefined
}

const operatorCreator: KeyCreator = { label: "operator" }

/** What authentication needs of a key: the stored hash, its scopes and its workspace. */
export interface KeyWithWorkspace {
  readonly keyId: string
  readonly keyHash: Uint8Array
  readonly scopes: ReadonlyArray<Scope>
  readonly revoked: boolean
  readonly workspace: Workspace
  readonly budget: Budget | undefined
  readonly expiresAt: Date | undefined
}

export class ApiKeyNotFound extends Data.TaggedError("ApiKeyNotFound")<{ readonly id: string }> {}

/** A key created to expire at a time already past: it could never be used. */
export class KeyExpiryInPast extends Data.TaggedError("KeyExpiryInPast")<{ readonly expiresAt: Date }> {}

/** Refused at creation: an expiry already past. */
const expiryChecked = (limits: KeyLimits) =>
  Effect.clockWith((clock) =>
    limits.expiresAt !== undefined && limits.expiresAt !== null && limits.expiresAt.getTime() <= clock.unsafeCurrentTimeMillis()
      ? Effect.fail(new KeyExpiryInPast({ expiresAt: limits.expiresAt }))
      : Effect.void
  )

const decodeBudget = Schema.decodeUnknownOption(Budget)

/** A stored budget that no longer decodes (hand-edited) counts as none, rather than failing the key. */
const storedBudget = (raw: unknown): Option.Option<Budget> => (raw === null || raw === undefined ? Option.none() : decodeBudget(raw))

export class ApiKeys extends Context.Tag("ApiKeys")<ApiKeys, {
  /** Returns the plaintext key once; only its hash is kept. */
  readonly create: (
    workspaceId: string,
    name: string,
    scopes: ReadonlyArray<Scope>,
    creator?: KeyCreator,
    limits?: KeyLimits
  ) => Effect.Effect<{ readonly record: ApiKeyRecord; readonly key: string }, WorkspaceNotFound | KeyExpiryInPast | StorageFailure>
  /** Sets or removes a key's budget and expiry (an expiry in the past expires the key now). */
  readonly update: (
    workspaceId: string,
    keyId: string,
    limits: KeyLimits
  ) => Effect.Effect<ApiKeyRecord, WorkspaceNotFound | ApiKeyNotFound | StorageFailure>
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<ApiKeyRecord>, WorkspaceNotFound | StorageFailure>
  /** Revoking twice is fine: the first revocation time stays. */
  readonly revoke: (
    workspaceId: string,
    keyId: string
  ) => Effect.Effect<ApiKeyRecord, WorkspaceNotFound | ApiKeyNotFound | StorageFailure>
  readonly findByHash: (hash: Uint8Array) => Effect.Effect<Option.Option<KeyWithWorkspace>, StorageFailure>
  readonly recordLastUsed: (usedAt: ReadonlyMap<string, Date>) => Effect.Effect<void, StorageFailure>
  /**
   * Whether the key of this hash (SHA-256, hex) is valid as far as this instance knows, from memory: created
   * and not revoked, here (at once) or anywhere else (within `validKeysRefresh`). What tells a valid key from
   * a guess before any lookup (failed-credential throttling); the lookup still decides.
   */
  readonly isKnownValid: (hashHex: string) => boolean
}>() {
  /**
   * Keys in PostgreSQL. The valid hashes are loaded when the layer is built and kept current
   * (src/services/identity/validKeyHashes.ts): this instance's own creations and revocations at once, everyone
   * else's within `validKeysRefresh`.
   */
  static readonly layer = Layer.scoped(
    ApiKeys,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const workspaces = yield* Workspaces
      const known = yield* validKeyHashesFromDatabase
      const decodeSettings = Schema.decodeUnknown(StoredWorkspaceSettings)
      type Row = {
        id: string
        workspace_id: string
        name: string
        display_prefix: string
        scopes: Array<Scope>
        created_at: Date
        revoked_at: Date | null
        last_used_at: Date | null
        created_by: string
        created_by_person: string | null
        budget: unknown
        expires_at: Date | null
      }
      const toRecord = (row: Row): ApiKeyRecord => ({
        budget: storedBudget(row.budget),
        expiresAt: Option.fromNullable(row.expires_at),
        createdBy: row.created_by,
        createdByPerson: Option.fromNullable(row.created_by_person),
        id: row.id,
        workspaceId: row.workspace_id,
        name: row.name,
        displayPrefix: row.display_prefix,
        scopes: row.scopes,
        createdAt: row.created_at,
        revokedAt: Option.fromNullable(row.revoked_at),
        lastUsedAt: Option.fromNullable(row.last_used_at)
      })
      const columns = sql`id, workspace_id, name, display_prefix, scopes, created_at, revoked_at, last_used_at, created_by,
                         created_by_person, budget, expires_at`
      const storage = Effect.mapError((cause: unknown) => new StorageFailure({ cause }))

      return {
        create: (workspaceId, name, scopes, creator = operatorCreator, limits = {}) =>
          Effect.gen(function*() {
            yield* expiryChecked(limits)
            yield* workspaces.get(workspaceId)
            const key = generateApiKey()
            const hash = hashApiKey(key)
            const rows = yield* sql<Row>`
              INSERT INTO api_keys (workspace_id, name, display_prefix, key_hash, scopes, created_by, created_by_person, budget, expires_at)
              VALUES (${workspaceId}, ${name}, ${displayPrefix(key)}, ${hash},
                      ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(scopes)}::jsonb)),
                      ${creator.label}, ${creator.personId ?? null},
                      ${limits.budget == null ? null : JSON.stringify(limits.budget)}::jsonb, ${limits.expiresAt ?? null})
              RETURNING ${columns}`.pipe(storage)
            known.learn(hash.toString("hex"), true)
            return { record: toRecord(rows[0]!), key }
          }),
        list: (workspaceId) =>
          Effect.zipRight(
            workspaces.get(workspaceId),
            sql<Row>`SELECT ${columns} FROM api_keys WHERE workspace_id = ${workspaceId} ORDER BY created_at`.pipe(
              storage,
              Effect.map((rows) => rows.map(toRecord))
            )
          ),
        revoke: (workspaceId, keyId) =>
          Effect.gen(function*() {
            yield* workspaces.get(workspaceId)
            if (!isUuid(keyId)) return yield* Effect.fail(new ApiKeyNotFound({ id: keyId }))
            const rows = yield* sql<Row & { key_hash: Uint8Array }>`
              UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
              WHERE id = ${keyId} AND workspace_id = ${workspaceId}
              RETURNING ${columns}, key_hash`.pipe(storage)
            if (!rows[0]) return yield* Effect.fail(new ApiKeyNotFound({ id: keyId }))
            known.learn(Buffer.from(rows[0].key_hash).toString("hex"), false)
            return toRecord(rows[0])
          }),
        update: (workspaceId, keyId, limits) =>
          Effect.gen(function*() {
            yield* workspaces.get(workspaceId)
            if (!isUuid(keyId)) return yield* Effect.fail(new ApiKeyNotFound({ id: keyId }))
            const budget = limits.budget === undefined ? sql`budget` : sql`${limits.budget === null ? null : JSON.stringify(limits.budget)}::jsonb`
            const expiresAt = limits.expiresAt === undefined ? sql`expires_at` : sql`${limits.expiresAt}::timestamptz`
            const rows = yield* sql<Row & { key_hash: Uint8Array; valid: boolean }>`
              UPDATE api_keys SET budget = ${budget}, expires_at = ${expiresAt}
              WHERE id = ${keyId} AND workspace_id = ${workspaceId}
              RETURNING ${columns}, key_hash, (revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())) AS valid`.pipe(storage)
            const row = rows[0]
            if (!row) return yield* Effect.fail(new ApiKeyNotFound({ id: keyId }))
            known.learn(Buffer.from(row.key_hash).toString("hex"), row.valid)
            return toRecord(row)
          }),
        findByHash: (hash) =>
          sql<{
            id: string
            key_hash: Uint8Array
            scopes: Array<Scope>
            revoked_at: Date | null
            budget: unknown
            expires_at: Date | null
            workspace_id: string
            workspace_name: string
            settings: unknown
            workspace_created_at: Date
          }>`
            SELECT k.id, k.key_hash, k.scopes, k.revoked_at, k.budget, k.expires_at, w.id AS workspace_id, w.name AS workspace_name,
                   w.settings, w.created_at AS workspace_created_at
            FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
            WHERE k.key_hash = ${Buffer.from(hash)}`.pipe(
            storage,
            Effect.flatMap((rows) => {
              const row = rows[0]
              if (!row) return Effect.succeedNone
              return Effect.map(Effect.orDie(decodeSettings(row.settings)), (settings) =>
                Option.some<KeyWithWorkspace>({
                  keyId: row.id,
                  keyHash: row.key_hash,
                  scopes: row.scopes,
                  revoked: row.revoked_at !== null,
                  budget: Option.getOrUndefined(storedBudget(row.budget)),
                  expiresAt: row.expires_at ?? undefined,
                  workspace: { id: row.workspace_id, name: row.workspace_name, settings, createdAt: row.workspace_created_at }
                }))
            })
          ),
        recordLastUsed: (usedAt) => {
          if (usedAt.size === 0) return Effect.void
          const batch = JSON.stringify([...usedAt].map(([id, at]) => ({ id, used_at: at.toISOString() })))
          // One statement for the whole batch; never moves a last-used time backwards.
          return sql`
            UPDATE api_keys AS k SET last_used_at = greatest(k.last_used_at, u.used_at)
            FROM jsonb_to_recordset(${batch}::jsonb) AS u(id uuid, used_at timestamptz)
            WHERE k.id = u.id`.pipe(storage, Effect.asVoid)
        },
        isKnownValid: (hashHex) => known.has(hashHex)
      }
    })
  )

  /** For unit tests: the same behaviour, kept in a Ref. */
  static readonly memory = Layer.effect(
    ApiKeys,
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const store = yield* Ref.make(new Map<string, ApiKeyRecord & { readonly hash: Buffer }>())
      const known = validKeyHashesInMemory()
      const strip = ({ hash: _hash, ...record }: ApiKeyRecord & { readonly hash: Buffer }): ApiKeyRecord => record
      return {
        create: (workspaceId, name, scopes, creator = operatorCreator, limits = {}) =>
          Effect.gen(function*() {
            yield* expiryChecked(limits)
            yield* workspaces.get(workspaceId)
            const key = generateApiKey()
            const stored = {
              budget: Option.fromNullable(limits.budget),
              expiresAt: Option.fromNullable(limits.expiresAt),
              createdBy: creator.label,
              createdByPerson: Option.fromNullable(creator.personId),
              id: crypto.randomUUID(),
              workspaceId,
              name,
              displayPrefix: displayPrefix(key),
              scopes,
              createdAt: new Date(),
              revokedAt: Option.none(),
              lastUsedAt: Option.none(),
              hash: hashApiKey(key)
            }
            yield* Ref.update(store, (map) => new Map(map).set(stored.id, stored))
            known.learn(stored.hash.toString("hex"), true)
            return { record: strip(stored), key }
          }),
        list: (workspaceId) =>
          Effect.zipRight(
            workspaces.get(workspaceId),
            Effect.map(Ref.get(store), (map) => [...map.values()].filter((k) => k.workspaceId === workspaceId).map(strip))
          ),
        revoke: (workspaceId, keyId) =>
          Effect.gen(function*() {
            yield* workspaces.get(workspaceId)
            const existing = (yield* Ref.get(store)).get(keyId)
            if (!existing || existing.workspaceId !== workspaceId) return yield* Effect.fail(new ApiKeyNotFound({ id: keyId }))
            const revoked = { ...existing, revokedAt: Option.orElse(existing.revokedAt, () => Option.some(new Date())) }
            yield* Ref.update(store, (map) => new Map(map).set(keyId, revoked))
            known.learn(existing.hash.toString("hex"), false)
            return strip(revoked)
          }),
        update: (workspaceId, keyId, limits) =>
          Effect.gen(function*() {
            yield* workspaces.get(workspaceId)
            const existing = (yield* Ref.get(store)).get(keyId)
            if (!existing || existing.workspaceId !== workspaceId) return yield* Effect.fail(new ApiKeyNotFound({ id: keyId }))
            const changed = {
              ...existing,
              budget: limits.budget === undefined ? existing.budget : Option.fromNullable(limits.budget),
              expiresAt: limits.expiresAt === undefined ? existing.expiresAt : Option.fromNullable(limits.expiresAt)
            }
            yield* Ref.update(store, (map) => new Map(map).set(keyId, changed))
            const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
            const expired = Option.exists(changed.expiresAt, (at) => at.getTime() <= now)
            known.learn(existing.hash.toString("hex"), Option.isNone(changed.revokedAt) && !expired)
            return strip(changed)
          }),
        findByHash: (hash) =>
          Effect.gen(function*() {
            const found = [...(yield* Ref.get(store)).values()].find((k) => Buffer.from(hash).equals(k.hash))
            if (!found) return Option.none()
            const workspace = yield* Effect.orDie(workspaces.get(found.workspaceId))
            return Option.some({
              keyId: found.id,
              keyHash: found.hash,
              scopes: found.scopes,
              revoked: Option.isSome(found.revokedAt),
              budget: Option.getOrUndefined(found.budget),
              expiresAt: Option.getOrUndefined(found.expiresAt),
              workspace
            })
          }),
        recordLastUsed: (usedAt) =>
          Ref.update(store, (map) => {
            const next = new Map(map)
            for (const [id, at] of usedAt) {
              const key = next.get(id)
              // Never moves a last-used time backwards.
              if (key && Option.match(key.lastUsedAt, { onNone: () => true, onSome: (last) => last < at })) {
                next.set(id, { ...key, lastUsedAt: Option.some(at) })
              }
            }
            return next
          }),
        isKnownValid: (hashHex) => known.has(hashHex)
      }
    })
  )
}
