import { HttpApiBuilder, type HttpServerError } from "@effect/platform"
import { Cause, Effect, Either, Option } from "effect"
import { WorkspaceApi } from "../api/Api"
import { AdminError } from "../api/errors/adminError"
import { type InvalidEventBatch, validateEventBatch } from "../api/schemas/events"
import { AppConfig } from "../config"
import { failureToProblem, tooLarge } from "../http/failureToProblem"
import { logDatabaseUnavailable } from "../services/Database"
import { UsageRepository } from "../services/UsageRepository"
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
  Effect.mapError(Effect.tapErrorTag(effect, "StorageFailure", (failure) => logDatabaseUnavailable(failure.cause)), (error) => {
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

/** A body that is not JSON, or too large, as the framework itself would have answered. */
const unreadableBody = (error: HttpServerError.RequestError, maxBodyBytes: number): AdminError => {
  const problem = Option.getOrElse(failureToProblem(Cause.fail(error), maxBodyBytes), () => tooLarge(maxBodyBytes))
  return new AdminError({ status: problem.status, code: problem.code, message: problem.message })
}

const invalidBatch = (invalid: InvalidEventBatch): AdminError =>
  new AdminError({
    status: 400,
    code: "invalid_event",
    message: invalid.index === null
      ? invalid.message
      : `Event ${invalid.index} is invalid (${invalid.field}): ${invalid.message}. Nothing of the batch was stored.`,
    field: invalid.field
  })

export const AdminHandlers = HttpApiBuilder.group(WorkspaceApi, "admin", (handlers) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const keys = yield* ApiKeys
    const usage = yield* UsageRepository
    const { maxBodyBytes } = yield* AppConfig
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
      // Raw: the batch is validated here, so a bad event is reported with its index and field.
      .handleRaw("ingestEvents", ({ path, request }) =>
        Effect.gen(function*() {
          yield* adminErrors(workspaces.get(path.id))
          const body = yield* request.json.pipe(Effect.mapError((error) => unreadableBody(error, maxBodyBytes)))
          const batch = yield* Either.match(validateEventBatch(body), {
            onLeft: (invalid) => Effect.fail(invalidBatch(invalid)),
            onRight: Effect.succeed
          })
          return yield* adminErrors(usage.ingest(path.id, batch.events))
        }))
  }))
