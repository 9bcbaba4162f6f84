import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Ref } from "effect"
import { orStorageFailure } from "./orStorageFailure"
import type { StorageFailure } from "./StorageFailure"

/** What the audit log records; `target` names what was changed, never a secret. */
export type AuditAction =
  | "session.signed_in"
  | "session.sign_in_failed"
  | "session.signed_out"
  | "api_key.created"
  | "api_key.revoked"
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

export const auditActions: ReadonlyArray<AuditAction> = [
  "session.signed_in",
  "session.sign_in_failed",
  "session.signed_out",
  "api_key.created",
  "api_key.revoked",
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
  "provider_key.removed"
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

export interface AuditPage {
  readonly data: ReadonlyArray<AuditRecord>
  readonly nextCursor: string | null
}

/** Every change by a person or the operator: who, when, from where, what. Newest first. */
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
        // The cursor is the id of the last row of the previous page.
        const before = cursor !== undefined && /^\d{1,18}$/.test(cursor) ? cursor : null
        return orStorageFailure(sql<{ id: string; at: Date; actor: string; action: string; target: string | null; address: string | null }>`
          SELECT id::text, at, actor, action, target, address FROM audit_log
          WHERE workspace_id = ${workspaceId}
            ${before === null ? sql`` : sql`AND id < ${before}::bigint`}
            ${action === undefined ? sql`` : sql`AND action = ${action}`}
          ORDER BY id DESC LIMIT ${limit + 1}`).pipe(
          Effect.map((rows) => ({
            data: rows.slice(0, limit),
            nextCursor: rows.length > limit ? rows[limit - 1]!.id : null
          }))
        )
      }
    }))
  )

  /** For tests and the in-memory app: rows in a Ref, numbered in order as the table's bigserial numbers them. */
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
            const before = cursor !== undefined && /^\d{1,18}$/.test(cursor) ? Number(cursor) : null
            const matching = all
              .filter((row) =>
                row.workspaceId === workspaceId && (before === null || Number(row.id) < before) &&
                (action === undefined || row.action === action)
              )
              .reverse()
            return {
              data: matching.slice(0, limit).map(({ workspaceId: _workspaceId, ...record }) => record),
              nextCursor: matching.length > limit ? matching[limit - 1]!.id : null
            }
          })
      }))
  )
}
