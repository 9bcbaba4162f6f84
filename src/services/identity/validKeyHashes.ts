import { SqlClient } from "@effect/sql"
import { Duration, Effect, type Scope } from "effect"
import { forkSpacedRounds } from "../../platform/spacedRounds"

/**
 * The hashes (SHA-256, hex) of the valid API keys, held in memory by each instance: what tells a valid key
 * from a guess before any lookup. Hashes only, about 110 bytes a key (100,000 keys: some 11 MB).
 */
export interface ValidKeyHashes {
  readonly has: (hashHex: string) => boolean
  /** A key created or revoked by this instance: known at once. */
  readonly learn: (hashHex: string, valid: boolean) => void
}

/** How often an instance asks which keys were created or revoked elsewhere (sql/0014_api_key_changes.sql). */
export const validKeysRefresh = Duration.seconds(1)

const over = (valid: Set<string>): ValidKeyHashes => ({
  has: (hashHex) => valid.has(hashHex),
  learn: (hashHex, isValid) => void (isValid ? valid.add(hashHex) : valid.delete(hashHex))
})

/** For the in-memory key store: it learns of every key itself. */
export const validKeyHashesInMemory = (): ValidKeyHashes => over(new Set())

interface ChangeRow {
  readonly version: string
  /** Null on the one row of an answer without changes. */
  readonly hash: string | null
  readonly valid: boolean | null
}

/**
 * The valid hashes of PostgreSQL's keys (not revoked, not expired: a key that expires later stays in the set, and
 * the lookup, which checks the expiry, refuses it): loaded now, then kept current by reading the change counter every
 * `validKeysRefresh` and, when it moved, the keys changed since (another instance's, the CLI's). A read
 * that fails is logged once and retried at the next tick; what changed meanwhile is read then.
 */
export const validKeyHashesFromDatabase: Effect.Effect<ValidKeyHashes, never, SqlClient.SqlClient | Scope.Scope> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const valid = new Set<string>()
    // The counter's version the set reflects; undefined until the first full load.
    let version: bigint | undefined
    const changesSince = (since: bigint | undefined) =>
      since === undefined
        ? sql<ChangeRow>`
            WITH counter AS (SELECT version::text FROM api_key_changes)
            SELECT counter.version, encode(k.key_hash, 'hex') AS hash, true AS valid
            FROM counter LEFT JOIN api_keys k ON k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`
        : sql<ChangeRow>`
            WITH counter AS (SELECT version::text FROM api_key_changes)
            SELECT counter.version, encode(k.key_hash, 'hex') AS hash,
                   k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()) AS valid
            FROM counter LEFT JOIN api_keys k ON k.change_version > ${since.toString()}::bigint`
    const apply = (since: bigint | undefined, rows: ReadonlyArray<ChangeRow>): boolean => {
      const read = BigInt(rows[0]?.version ?? "0")
      // A counter behind ours (the database restored from a backup): everything is loaded again.
      if (since !== undefined && read < since) return false
      if (since === undefined) valid.clear()
      for (const row of rows) {
        if (row.hash === null) continue
        if (row.valid === true) valid.add(row.hash)
        else valid.delete(row.hash)
      }
      version = read
      return true
    }
    const refresh = Effect.suspend(() => {
      const since = version
      return Effect.flatMap(changesSince(since), (rows) =>
        apply(since, rows) ? Effect.void : Effect.flatMap(changesSince(undefined), (all) => Effect.sync(() => apply(undefined, all))))
    })
    let failing = false
    const keepCurrent = refresh.pipe(
      Effect.tap(() => void (failing = false)),
      Effect.catchAll((cause) => {
        if (failing) return Effect.void
        failing = true
        return Effect.logWarning("valid API keys cannot be read: keys created or revoked elsewhere are learnt once they can be", cause)
      })
    )
    yield* keepCurrent
    yield* forkSpacedRounds(keepCurrent, validKeysRefresh)
    return over(valid)
  }
)
