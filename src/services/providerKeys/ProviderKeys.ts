import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option, Ref } from "effect"
import { orStorageFailure } from "../../platform/orStorageFailure"
import type { StorageFailure } from "../../platform/StorageFailure"

/** A workspace's own key for one provider, as stored: sealed, never in the clear. */
export interface StoredProviderKey {
  readonly workspaceId: string
  readonly provider: string
  /** `domain/credentials` sealCredential's text, bound to the workspace and provider. */
  readonly sealed: string
  /** The id of the CREDENTIALS_KEY that sealed it. */
  readonly sealedWith: string
  readonly last4: string
  readonly createdAt: Date
  /** "operator" or the console person's email. */
  readonly createdBy: string
  readonly lastUsedAt: Date | null
  readonly lastError: string | null
  readonly lastErrorAt: Date | null
}

export type NewProviderKey = Pick<StoredProviderKey, "workspaceId" | "provider" | "sealed" | "sealedWith" | "last4" | "createdBy">

/**
 * The store of customer-supplied provider keys (sql/0011_provider_keys.sql). Saving a key for a provider
 * replaces the workspace's previous one and forgets its use and errors. Sealing, checking and opening
 * are the callers' business: this store only keeps the sealed text.
 */
export class ProviderKeys extends Context.Tag("ProviderKeys")<ProviderKeys, {
  readonly put: (key: NewProviderKey) => Effect.Effect<StoredProviderKey, StorageFailure>
  /** The workspace's keys, by provider name. */
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<StoredProviderKey>, StorageFailure>
  readonly get: (workspaceId: string, provider: string) => Effect.Effect<Option.Option<StoredProviderKey>, StorageFailure>
  /** The key removed, if there was one. */
  readonly remove: (workspaceId: string, provider: string) => Effect.Effect<Option.Option<StoredProviderKey>, StorageFailure>
  readonly markUsed: (workspaceId: string, provider: string, at: Date) => Effect.Effect<void, StorageFailure>
  readonly recordError: (workspaceId: string, provider: string, message: string, at: Date) => Effect.Effect<void, StorageFailure>
  /** Keys not sealed with the given CREDENTIALS_KEY id (what a rotation has left to do). */
  readonly sealedOtherThan: (keyId: string) => Effect.Effect<ReadonlyArray<StoredProviderKey>, StorageFailure>
  /** Replaces a key's sealed text after a rotation, only if it is still the one read (a concurrent save wins). */
  readonly reseal: (
    key: Pick<StoredProviderKey, "workspaceId" | "provider" | "sealed">,
    next: Pick<StoredProviderKey, "sealed" | "sealedWith">
  ) => Effect.Effect<boolean, StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    ProviderKeys,
    Effect.map(SqlClient.SqlClient, (sql) => {
      const columns = sql`workspace_id, provider, sealed, sealed_with, last4, created_at, created_by, last_used_at, last_error, last_error_at`
      const rows = <E>(statement: Effect.Effect<ReadonlyArray<Row>, E>) => Effect.map(statement, (found) => found.map(fromRow))
      return {
        put: (key) =>
          orStorageFailure(sql<Row>`
            INSERT INTO workspace_provider_keys (workspace_id, provider, sealed, sealed_with, last4, created_by)
            VALUES (${key.workspaceId}, ${key.provider}, ${key.sealed}, ${key.sealedWith}, ${key.last4}, ${key.createdBy})
            ON CONFLICT (workspace_id, provider) DO UPDATE SET
              sealed = EXCLUDED.sealed, sealed_with = EXCLUDED.sealed_with, last4 = EXCLUDED.last4,
              created_at = now(), created_by = EXCLUDED.created_by, last_used_at = NULL, last_error = NULL, last_error_at = NULL
            RETURNING ${columns}`).pipe(Effect.map((found) => fromRow(found[0]!))),
        list: (workspaceId) =>
          orStorageFailure(rows(sql<Row>`SELECT ${columns} FROM workspace_provider_keys WHERE workspace_id = ${workspaceId} ORDER BY provider`)),
        get: (workspaceId, provider) =>
          orStorageFailure(rows(sql<Row>`
            SELECT ${columns} FROM workspace_provider_keys WHERE workspace_id = ${workspaceId} AND provider = ${provider}`))
            .pipe(Effect.map((found) => Option.fromNullable(found[0]))),
        remove: (workspaceId, provider) =>
          orStorageFailure(rows(sql<Row>`
            DELETE FROM workspace_provider_keys WHERE workspace_id = ${workspaceId} AND provider = ${provider} RETURNING ${columns}`))
            .pipe(Effect.map((found) => Option.fromNullable(found[0]))),
        markUsed: (workspaceId, provider, at) =>
          orStorageFailure(sql`
            UPDATE workspace_provider_keys SET last_used_at = GREATEST(coalesce(last_used_at, ${at}), ${at})
            WHERE workspace_id = ${workspaceId} AND provider = ${provider}`).pipe(Effect.asVoid),
        recordError: (workspaceId, provider, message, at) =>
          orStorageFailure(sql`
            UPDATE workspace_provider_keys SET last_error = ${message}, last_error_at = ${at}
            WHERE workspace_id = ${workspaceId} AND provider = ${provider}`).pipe(Effect.asVoid),
        sealedOtherThan: (keyId) =>
          orStorageFailure(rows(sql<Row>`
            SELECT ${columns} FROM workspace_provider_keys WHERE sealed_with <> ${keyId} ORDER BY workspace_id, provider`)),
        reseal: (key, next) =>
          orStorageFailure(sql<{ provider: string }>`
            UPDATE workspace_provider_keys SET sealed = ${next.sealed}, sealed_with = ${next.sealedWith}
            WHERE workspace_id = ${key.workspaceId} AND provider = ${key.provider} AND sealed = ${key.sealed}
            RETURNING provider`).pipe(Effect.map((found) => found.length > 0))
      }
    })
  )

  /** For fast tests: the same behaviour, kept in a Ref. */
  static readonly memory = Layer.effect(
    ProviderKeys,
    Effect.map(Ref.make(new Map<string, StoredProviderKey>()), (store) => {
      const id = (workspaceId: string, provider: string) => `${workspaceId}/${provider}`
      const update = (workspaceId: string, provider: string, change: (key: StoredProviderKey) => StoredProviderKey) =>
        Ref.update(store, (map) => {
          const current = map.get(id(workspaceId, provider))
          return current === undefined ? map : new Map(map).set(id(workspaceId, provider), change(current))
        })
      const sorted = (keys: Iterable<StoredProviderKey>) =>
        [...keys].sort((a, b) => a.workspaceId.localeCompare(b.workspaceId) || a.provider.localeCompare(b.provider))
      return {
        put: (key) => {
          const stored: StoredProviderKey = { ...key, createdAt: new Date(), lastUsedAt: null, lastError: null, lastErrorAt: null }
          return Effect.as(Ref.update(store, (map) => new Map(map).set(id(key.workspaceId, key.provider), stored)), stored)
        },
        list: (workspaceId) => Effect.map(Ref.get(store), (map) => sorted([...map.values()].filter((k) => k.workspaceId === workspaceId))),
        get: (workspaceId, provider) => Effect.map(Ref.get(store), (map) => Option.fromNullable(map.get(id(workspaceId, provider)))),
        remove: (workspaceId, provider) =>
          Ref.modify(store, (map) => {
            const removed = map.get(id(workspaceId, provider))
            if (removed === undefined) return [Option.none(), map]
            const next = new Map(map)
            next.delete(id(workspaceId, provider))
            return [Option.some(removed), next]
          }),
        markUsed: (workspaceId, provider, at) =>
          update(workspaceId, provider, (key) => ({
            ...key,
            lastUsedAt: key.lastUsedAt !== null && key.lastUsedAt > at ? key.lastUsedAt : at
          })),
        recordError: (workspaceId, provider, message, at) =>
          update(workspaceId, provider, (key) => ({ ...key, lastError: message, lastErrorAt: at })),
        sealedOtherThan: (keyId) => Effect.map(Ref.get(store), (map) => sorted([...map.values()].filter((k) => k.sealedWith !== keyId))),
        reseal: (key, next) =>
          Ref.modify(store, (map) => {
            const current = map.get(id(key.workspaceId, key.provider))
            if (current === undefined || current.sealed !== key.sealed) return [false, map]
            return [true, new Map(map).set(id(key.workspaceId, key.provider), { ...current, ...next })]
          })
      }
    })
  )
}

interface Row {
  readonly workspace_id: string
  readonly provider: string
  readonly sealed: string
  readonly sealed_with: string
  readonly last4: string
  readonly created_at: Date
  readonly created_by: string
  readonly last_used_at: Date | null
  readonly last_error: string | null
  readonly last_error_at: Date | null
}

const fromRow = (row: Row): StoredProviderKey => ({
  workspaceId: row.workspace_id,
  provider: row.provider,
  sealed: row.sealed,
  sealedWith: row.sealed_with,
  last4: row.last4,
  createdAt: row.created_at,
  createdBy: row.created_by,
  lastUsedAt: row.last_used_at,
  lastError: row.last_error,
  lastErrorAt: row.last_error_at
})
