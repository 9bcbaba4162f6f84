import { SqlClient, SqlError } from "@effect/sql"
import { Context, Data, Effect, Layer, Option, Ref, Schema } from "effect"
import * as crypto from "node:crypto"
import {
  applySettingsPatch,
  defaultWorkspaceSettings,
  StoredWorkspaceSettings,
  type WorkspaceSettingsPatch
} from "../../domain/workspaceSettings"
import type { Workspace } from "../../domain/workspace"
import { StorageFailure } from "../../platform/StorageFailure"

export class WorkspaceNotFound extends Data.TaggedError("WorkspaceNotFound")<{ readonly id: string }> {}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** Ids that cannot exist are "not found" without asking the database (which would reject them). */
export const isUuid = (id: string): boolean => uuidPattern.test(id)

/** A page of workspaces, newest first; the cursor continues after its last one. */
export interface WorkspacePage {
  readonly data: ReadonlyArray<Workspace>
  readonly nextCursor: string | null
}

export interface WorkspaceQuery {
  /** Part of the name (case-insensitive), or a whole id. */
  readonly search?: string | undefined
  readonly limit: number
  readonly cursor?: string | undefined
}

/** The cursor is the last row's creation time and id, so pages stay stable while workspaces are added. */
const encodeCursor = (createdAt: string, id: string): string =>
  Buffer.from(JSON.stringify([createdAt, id])).toString("base64url")
const decodeCursor = (cursor: string | undefined): readonly [string, string] | undefined => {
  if (cursor === undefined) return undefined
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    return Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === "string" && typeof parsed[1] === "string" &&
        /^\d{4}-\d{2}-\d{2}[ T][\d:.]+Z?$/.test(parsed[0]) && isUuid(parsed[1])
      ? [parsed[0], parsed[1]]
      : undefined
  } catch {
    return undefined
  }
}

export class Workspaces extends Context.Tag("Workspaces")<Workspaces, {
  readonly list: (query: WorkspaceQuery) => Effect.Effect<WorkspacePage, StorageFailure>
  readonly create: (name: string, settings: WorkspaceSettingsPatch) => Effect.Effect<Workspace, StorageFailure>
  readonly get: (id: string) => Effect.Effect<Workspace, WorkspaceNotFound | StorageFailure>
  readonly updateSettings: (
    id: string,
    patch: { readonly name?: string | undefined; readonly settings?: WorkspaceSettingsPatch | undefined }
  ) => Effect.Effect<Workspace, WorkspaceNotFound | StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    Workspaces,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decodeSettings = Schema.decodeUnknown(StoredWorkspaceSettings)
      const toWorkspace = (row: { id: string; name: string; settings: unknown; created_at: Date }) =>
        Effect.map(
          Effect.orDie(decodeSettings(row.settings)),
          (settings): Workspace => ({ id: row.id, name: row.name, settings, createdAt: row.created_at })
        )
      const storage = <A, R>(effect: Effect.Effect<A, SqlError.SqlError, R>) =>
        Effect.mapError(effect, (cause) => new StorageFailure({ cause }))

      const get = (id: string) =>
        isUuid(id)
          ? storage(
            sql<{ id: string; name: string; settings: unknown; created_at: Date }>`
              SELECT id, name, settings, created_at FROM workspaces WHERE id = ${id}`
          ).pipe(
            Effect.flatMap((rows) =>
              rows[0] ? toWorkspace(rows[0]) : Effect.fail(new WorkspaceNotFound({ id }))
            )
          )
          : Effect.fail(new WorkspaceNotFound({ id }))

      return {
        list: ({ cursor, limit, search }) => {
          const after = decodeCursor(cursor)
          const term = search?.trim() ?? ""
          const pattern = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
          return storage(
            // The cursor keeps the creation time to the microsecond (a Date would round it to milliseconds).
            sql<{ id: string; name: string; settings: unknown; created_at: Date; created_key: string }>`
              SELECT id, name, settings, created_at, (created_at AT TIME ZONE 'UTC')::text AS created_key FROM workspaces
              WHERE true
                ${term === "" ? sql`` : isUuid(term) ? sql`AND id = ${term}` : sql`AND name ILIKE ${pattern}`}
                ${after === undefined ? sql`` : sql`AND (created_at, id) < (${after[0]}::timestamp AT TIME ZONE 'UTC', ${after[1]}::uuid)`}
              ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
          ).pipe(
            // One row more than a page was asked for: it tells whether there is a next page.
            Effect.flatMap((rows) =>
              Effect.map(Effect.forEach(rows.slice(0, limit), toWorkspace), (data) => ({
                data,
                nextCursor: rows.length > limit && limit > 0 ? encodeCursor(rows[limit - 1]!.created_key, rows[limit - 1]!.id) : null
              })))
          )
        },
        create: (name, patch) => {
          const settings = applySettingsPatch(defaultWorkspaceSettings, patch)
          return storage(
            sql<{ id: string; name: string; settings: unknown; created_at: Date }>`
              INSERT INTO workspaces (name, settings) VALUES (${name}, ${JSON.stringify(settings)}::jsonb)
              RETURNING id, name, settings, created_at`
          ).pipe(Effect.flatMap((rows) => toWorkspace(rows[0]!)))
        },
        get,
        updateSettings: (id, patch) =>
          sql.withTransaction(
            Effect.gen(function*() {
              const current = yield* get(id)
              const settings = applySettingsPatch(current.settings, patch.settings ?? {})
              const name = patch.name ?? current.name
              yield* storage(
                sql`UPDATE workspaces SET name = ${name}, settings = ${JSON.stringify(settings)}::jsonb,
                    updated_at = now() WHERE id = ${id}`
              )
              return { ...current, name, settings }
            })
          ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StorageFailure({ cause }))))
      }
    })
  )

  /** For unit tests: the same behaviour, kept in a Ref. */
  static readonly memory = Layer.effect(
    Workspaces,
    Effect.gen(function*() {
      const store = yield* Ref.make(new Map<string, Workspace>())
      const get = (id: string) =>
        Effect.flatMap(Ref.get(store), (map) =>
          Option.match(Option.fromNullable(map.get(id)), {
            onNone: () => Effect.fail(new WorkspaceNotFound({ id })),
            onSome: Effect.succeed
          }))
      return {
        list: ({ cursor, limit, search }) =>
          Effect.map(Ref.get(store), (map) => {
            const after = decodeCursor(cursor)
            const term = search?.trim().toLowerCase() ?? ""
            // Newest first, ties by id, as ORDER BY created_at DESC, id DESC; the cursor is a position, not a row.
            const sorted = [...map.values()]
              .filter((w) => term === "" || (isUuid(term) ? w.id === term : w.name.toLowerCase().includes(term)))
              .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
            const afterTime = after === undefined ? undefined : new Date(after[0].replace(" ", "T").replace(/Z?$/, "Z")).getTime()
            const rest = after === undefined ? sorted : sorted.filter((w) =>
              w.createdAt.getTime() < afterTime! || (w.createdAt.getTime() === afterTime && w.id < after[1])
            )
            const data = rest.slice(0, limit)
            const last = data[data.length - 1]
            return { data, nextCursor: rest.length > limit && last ? encodeCursor(last.createdAt.toISOString(), last.id) : null }
          }),
        create: (name, patch) =>
          Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
            Ref.modify(store, (map) => {
              // Creation times are distinct, as the database's microsecond times are: the newest is listed first.
              const latest = Math.max(-Infinity, ...[...map.values()].map((w) => w.createdAt.getTime()))
              const workspace: Workspace = {
                id: crypto.randomUUID(),
                name,
                settings: applySettingsPatch(defaultWorkspaceSettings, patch),
                createdAt: new Date(Math.max(now, latest + 1))
              }
              return [workspace, new Map(map).set(workspace.id, workspace)]
            })),
        get,
        updateSettings: (id, patch) =>
          Effect.flatMap(get(id), (current) => {
            const next: Workspace = {
              ...current,
              name: patch.name ?? current.name,
              settings: applySettingsPatch(current.settings, patch.settings ?? {})
            }
            return Effect.as(Ref.update(store, (map) => new Map(map).set(id, next)), next)
          })
      }
    })
  )
}
