import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Ref } from "effect"
import { orStorageFailure } from "../../platform/orStorageFailure"
import type { StorageFailure } from "../../platform/StorageFailure"

/** What the audit log records; `target` names what was changed, never a secret. */
export type AuditAction =
  | "session.signed_in"
  | "session.sign_in_failed"
  | "session.signed_out"
  | "api_key.created"
  | "api_key.revoked"
  | "api_key.changed"
  | "member.invited"
  | "member.changed"
  | "member.removed"
  | "invitation.accepted"
  | "password.changed"
  | "password.reset_link_created"
  | "password.reset"
  | "settings.changed"
  | "workspace.created"
  | "export.run"
  | "provider_key.set"
  | "provider_key.removed"
  | "webhook.created"
  | "webhook.removed"

export const auditActions: ReadonlyArray<AuditAction> = [
  "session.signed_in",
  "session.sign_in_failed",
  "session.signed_out",
  "api_key.created",
  "api_key.revoked",
  "api_key.changed",
  "member.invited",
  "member.changed",
  "member.removed",
  "invitation.accepted",
  "password.changed",
  "password.reset_link_created",
  "password.reset",
  "settings.changed",
  "workspace.created",
  "export.run",
  "provider_key.set",
  "provider_key.removed",
  "webhook.created",
  "webhook.removed"
]

export interface AuditEntry {
  readonly workspaceIds: ReadonlyArray<string | null>
  readonly actor: string
  readonly action: AuditAction
  readonly target: string | null
  readonly address: string | null
}

export interface AuditRecord {
  readonly id: string
  readonly at: Date
  readonly actor: string
  readonly action: string
  readonly target: string | null
  readonly address: string | null
}

/** Newest first: later time first, then the higher id (as a number). */
const newestFirst = (a: AuditRecord, b: AuditRecord): number =>
  b.at.getTime() - a.at.getTime() || Number(b.id) - Number(a.id)

export interface AuditPage {
  readonly data: ReadonlyArray<AuditRecord>
  readonly nextCursor: string | null
}

/**
 * Every change by a person or the operator: who, when, from where, what. Listed newest first: by time,
 * then by id (a number: rows written in one transaction share their time), a page at a time. The cursor
 * is the id of the last row of a page, the next page what comes after that row in the same order; a
 * cursor that names no row of the workspace starts from the newest.
 */
export class AuditLog extends Context.Tag("AuditLog")<AuditLog, {
  /** One row per workspace concerned (null: none, e.g. a sign-in by an unknown email). */
  readonly record: (entry: AuditEntry) => Effect.Effect<void, StorageFailure>
  readonly list: (
    workspaceId: string,
    options: { readonly limit: number; readonly cursor?: string | undefined; readonly action?: string | undefined }
  ) => Effect.Effect<AuditPage, StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    AuditLog,
    Effect.map(SqlClient.SqlClient, (sql) => ({
      record: (entry) =>
        orStorageFailure(sql`
          INSERT INTO audit_log (workspace_id, actor, action, target, address)
          SELECT w, ${entry.actor}, ${entry.action}, ${entry.target}, ${entry.address}
          FROM jsonb_array_elements_text(${JSON.stringify(entry.workspaceIds.length === 0 ? [null] : entry.workspaceIds)}::jsonb) AS j(w0),
               LATERAL (SELECT w0::uuid AS w) AS ids`).pipe(Effect.asVoid),
      list: (workspaceId, { action, cursor, limit }) => {
        const after = cursor !== undefined && /^\d{1,18}$/.test(cursor) ? cursor : null
        // Ordered by the table's columns (a.at, a.id), not by the text id the rows are read as.
        return orStorageFailure(sql<{ id: string; at: Date; actor: string; action: string; target: string | null; address: string | null }>`
          WITH last_seen AS (
            SELECT at, id FROM audit_log WHERE workspace_id = ${workspaceId} AND id = ${after}::bigint
          )
          SELECT a.id::text AS id, a.at, a.actor, a.action, a.target, a.address FROM audit_log a
          WHERE a.workspace_id = ${workspaceId}
            AND (NOT EXISTS (SELECT 1 FROM last_seen) OR (a.at, a.id) < (SELECT at, id FROM last_seen))
            ${action === undefined ? sql`` : sql`AND a.action = ${action}`}
          ORDER BY a.at DESC, a.id DESC LIMIT ${limit + 1}`).pipe(
          Effect.map((rows) => ({
            data: rows.slice(0, limit),
            nextCursor: rows.length > limit ? rows[limit - 1]!.id : null
          }))
        )
      }
    }))
  )

  /** For tests and the in-memory app: rows in a Ref, numbered in order as the table's identity numbers them. */
  static readonly memory = Layer.effect(
    AuditLog,
    Effect.map(Ref.make<ReadonlyArray<AuditRecord & { readonly workspaceId: string | null }>>([]), (rows) =>
      AuditLog.of({
        record: (entry) =>
          Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
            Ref.update(rows, (existing) => [
              ...existing,
              ...(entry.workspaceIds.length === 0 ? [null] : entry.workspaceIds).map((workspaceId, index) => ({
                id: String(existing.length + index + 1),
                at: new Date(now),
                workspaceId,
                actor: entry.actor,
                action: entry.action,
                target: entry.target,
                address: entry.address
              }))
            ])),
        list: (workspaceId, { action, cursor, limit }) =>
          Effect.map(Ref.get(rows), (all) => {
            const lastSeen = all.find((row) => row.workspaceId === workspaceId && row.id === cursor)
            const matching = all
              .filter((row) =>
                row.workspaceId === workspaceId && (lastSeen === undefined || newestFirst(row, lastSeen) > 0) &&
                (action === undefined || row.action === action)
              )
              .sort(newestFirst)
            return {
              data: matching.slice(0, limit).map(({ workspaceId: _workspaceId, ...record }) => record),
              nextCursor: matching.length > limit ? matching[limit - 1]!.id : null
            }
          })
      }))
  )
}
