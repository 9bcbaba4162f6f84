import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { WorkspaceApi } from "../api/Api"
import { AdminError } from "../api/errors/adminError"
import { ApiKeyNotFound, ApiKeys, type ApiKeyRecord } from "../services/ApiKeys"
import { StorageFailure, WorkspaceNotFound, Workspaces, type Workspace } from "../services/Workspaces"

const workspaceView = (w: Workspace) => ({ id: w.id, name: w.name, settings: w.settings, createdAt: w.createdAt.toISOString() })

const keyView = (k: ApiKeyRecord) => ({
  id: k.id,
  name: k.name,
  displayPrefix: k.displayPrefix,
  scopes: k.scopes,
  createdAt: k.createdAt.toISOString(),
  revokedAt: Option.getOrNull(Option.map(k.revokedAt, (d) => d.toISOString())),
  lastUsedAt: Option.getOrNull(Option.map(k.lastUsedAt, (d) => d.toISOString()))
})

/** Service failures as the admin API's errors. */
const adminErrors = <A, R>(
  effect: Effect.Effect<A, WorkspaceNotFound | ApiKeyNotFound | StorageFailure, R>
): Effect.Effect<A, AdminError, R> =>
  Effect.mapError(effect, (error) => {
    switch (error._tag) {
      case "WorkspaceNotFound":
        return new AdminError({ status: 404, code: "workspace_not_found", message: `No workspace with id ${error.id}.` })
      case "ApiKeyNotFound":
        return new AdminError({
          status: 404,
          code: "api_key_not_found",
          message: `No API key with id ${error.id} in this workspace.`
        })
      case "StorageFailure":
        return new AdminError({ status: 503, code: "unavailable", message: "The database is unavailable. Retry shortly." })
    }
  })

export const AdminHandlers = HttpApiBuilder.group(WorkspaceApi, "admin", (handlers) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const keys = yield* ApiKeys
    return handlers
      .handle("createWorkspace", ({ payload }) =>
        workspaces.create(payload.name, payload.settings ?? {}).pipe(Effect.map(workspaceView), adminErrors))
      .handle("getWorkspace", ({ path }) => workspaces.get(path.id).pipe(Effect.map(workspaceView), adminErrors))
      .handle("updateWorkspace", ({ path, payload }) =>
        workspaces.updateSettings(path.id, payload).pipe(Effect.map(workspaceView), adminErrors))
      .handle("createApiKey", ({ path, payload }) =>
        keys.create(path.id, payload.name, payload.scopes).pipe(
          Effect.map(({ key, record }) => ({ ...keyView(record), key })),
          adminErrors
        ))
      .handle("listApiKeys", ({ path }) =>
        keys.list(path.id).pipe(Effect.map((list) => ({ data: list.map(keyView) })), adminErrors))
      .handle("revokeApiKey", ({ path }) => keys.revoke(path.id, path.keyId).pipe(Effect.map(keyView), adminErrors))
  }))
