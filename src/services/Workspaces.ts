import { SqlClient, SqlError } from "@effect/sql"
import { Context, Data, Effect, Layer, Option, Ref, Schema } from "effect"
import * as crypto from "node:crypto"
import {
  applySettingsPatch,
  defaultWorkspaceSettings,
  StoredWorkspaceSettings,
  type WorkspaceSettings,
  type WorkspaceSettingsPatch
} from "../domain/workspaceSettings"

export interface Workspace {
  readonly id: string
  readonly name: string
  readonly settings: WorkspaceSettings
  readonly createdAt: Date
}

export class WorkspaceNotFound extends Data.TaggedError("WorkspaceNotFound")<{ readonly id: string }> {}

/** Storage failures are not the caller's fault: they surface as 5xx/503, never as "not found". */
export class StorageFailure extends Data.TaggedError("StorageFailure")<{ readonly cause: unknown }> {}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** Ids that cannot exist are "not found" without asking the database (which would reject them). */
export const isUuid = (id: string): boolean => uuidPattern.test(id)

export class Workspaces extends Context.Tag("Workspaces")<Workspaces, {
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
        create: (name, patch) => {
          const workspace: Workspace = {
            id: crypto.randomUUID(),
            name,
            settings: applySettingsPatch(defaultWorkspaceSettings, patch),
            createdAt: new Date()
          }
          return Effect.as(Ref.update(store, (map) => new Map(map).set(workspace.id, workspace)), workspace)
        },
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
