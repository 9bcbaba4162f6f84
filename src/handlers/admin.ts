import { HttpApiBuilder, type HttpServerError } from "@effect/platform"
import { Cause, Effect, Either, Option } from "effect"
import { WorkspaceApi } from "../api/Api"
import { AdminError } from "../api/errors/adminError"
import { type InvalidEventBatch, validateEventBatch } from "../api/schemas/events"
import { AppConfig } from "../config"
import { failureToProblem, tooLarge } from "../api/requestProblems"
import { logDatabaseUnavailable } from "../platform/Database"
import { UsageLedger } from "../services/usage/3-UsageLedger/index"
import { ApiKeys } from "../services/identity/ApiKeys"
import { Workspaces } from "../services/workspaces/Workspaces"
import { type AuditAction, AuditLog } from "../services/workspaces/AuditLog"
import { Members } from "../services/people/Members"
import { ProviderCredentials } from "../services/providerKeys/ProviderCredentials"
import { Passwords } from "../services/identity/Passwords"
import {
  auditView,
  clientAddress,
  invitedView,
  keyView as consoleKeyView,
  memberView,
  passwordResetUrl,
  providerKeyWireView,
  upstreamView,
  workspaceView
} from "./consoleViews"
import { ExportService } from "../services/exports/ExportService/index"
import { Routes } from "../services/forwarding/Routes"
import { RateLimits } from "../services/limits/RateLimits"
import { Budgets } from "../services/limits/Budgets"
import { keyLimits, keyViewsWithSpend, keyViewWithSpend } from "./keySpend"
import { admitWorkspaceExport, retryAfterQueueTimeout } from "./exportAdmission"
import { asExportError } from "./exports"
import { type ServiceError, serviceErrorFields } from "./serviceErrors"
import { Webhooks } from "../services/webhooks/Webhooks"
import { createdWebhookView, deliveryView, webhookView } from "./webhookViews"

/** The admin API's key view: the console's, without who created it. */
const keyView = ({ createdBy: _createdBy, ...view }: ReturnType<typeof consoleKeyView>) => view

/** Service failures as the admin API's errors (the console answers the same words: ./serviceErrors). */
const adminErrors = <A, R>(effect: Effect.Effect<A, ServiceError, R>): Effect.Effect<A, AdminError, R> =>
  Effect.mapError(
    Effect.tapErrorTag(effect, "StorageFailure", (failure) => logDatabaseUnavailable(failure.cause)),
    (error) => new AdminError(serviceErrorFields(error))
  )

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
    const usage = yield* UsageLedger
    const config = yield* AppConfig
    const { maxBodyBytes } = config
    const members = yield* Members
    const audit = yield* AuditLog
    const credentials = yield* ProviderCredentials
    const exports = yield* ExportService
    const rateLimits = yield* RateLimits
    const budgets = yield* Budgets
    const passwords = yield* Passwords
    const routes = yield* Routes
    const webhooks = yield* Webhooks
    /** Every change the operator makes through the admin API is audited like a console change. */
    const audited = (workspaceId: string, action: AuditAction, target: string) =>
      Effect.flatMap(clientAddress, (address) => audit.record({ workspaceIds: [workspaceId], actor: "operator", action, target, address }))
    return handlers
      .handle("listWorkspaces", ({ urlParams }) =>
        workspaces.list({ search: urlParams.search, limit: urlParams.limit ?? 50, cursor: urlParams.cursor }).pipe(
          Effect.map((page) => ({ data: page.data.map(workspaceView), nextCursor: page.nextCursor })),
          adminErrors
        ))
      .handle("inviteMember", ({ path, payload }) =>
        members.invite(path.id, payload).pipe(
          Effect.tap((invitation) => audited(path.id, "member.invited", `${invitation.member.email} (${invitation.member.role})`)),
          Effect.map((invitation) => invitedView(config, invitation)),
          adminErrors
        ))
      .handle("passwordReset", ({ payload }) =>
        Effect.gen(function*() {
          const link = yield* passwords.issueReset(payload.email).pipe(
            Effect.catchTag("NoAccount", (missing) =>
              Effect.fail(new AdminError({ status: 404, code: "no_account", message: `No account has the email ${missing.email}.`, field: "email" })))
          )
          // Audited where the person belongs: their workspaces' admins see that a reset link was issued.
          yield* adminErrors(Effect.gen(function*() {
            const workspaceIds = (yield* members.workspacesOf(link.person.id)).map((w) => w.id)
            yield* audit.record({
              workspaceIds,
              actor: "operator",
              action: "password.reset_link_created",
              target: link.person.email,
              address: yield* clientAddress
            })
          }))
          return { resetUrl: passwordResetUrl(config, link.token), expiresAt: link.expiresAt.toISOString() }
        }).pipe(Effect.catchTag("StorageFailure", (failure) => adminErrors(Effect.fail(failure)))))
      .handle("listMembers", ({ path }) =>
        members.list(path.id).pipe(Effect.map((list) => ({ data: list.map(memberView) })), adminErrors))
      .handle("changeMember", ({ path, payload }) =>
        members.setRole(path.id, path.memberId, payload.role).pipe(
          Effect.tap((member) => audited(path.id, "member.changed", `${member.email} (${member.role})`)),
          Effect.map(memberView),
          adminErrors
        ))
      .handle("removeMember", ({ path }) =>
        members.remove(path.id, path.memberId).pipe(
          Effect.tap((member) => audited(path.id, "member.removed", member.email)),
          Effect.map(memberView),
          adminErrors
        ))
      .handle("setProviderKey", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* adminErrors(workspaces.get(path.id))
          const saved = yield* adminErrors(
            credentials.set({ workspaceId: path.id, provider: path.provider, apiKey: payload.apiKey, actor: "operator" })
          )
          yield* adminErrors(audited(path.id, "provider_key.set", `${saved.provider} (…${saved.last4})`))
          return providerKeyWireView(saved)
        }))
      .handle("listProviderKeys", ({ path }) =>
        Effect.zipRight(workspaces.get(path.id), credentials.list(path.id)).pipe(
          Effect.map((list) => ({ data: list.map(providerKeyWireView) })),
          adminErrors
        ))
      .handle("removeProviderKey", ({ path }) =>
        Effect.zipRight(workspaces.get(path.id), credentials.remove(path.id, path.provider)).pipe(
          adminErrors,
          Effect.flatMap(Option.match({
            onNone: () =>
              Effect.fail(new AdminError({ status: 404, code: "provider_key_not_found", message: `The workspace has no ${path.provider} key.` })),
            onSome: (removed) =>
              Effect.as(adminErrors(audited(path.id, "provider_key.removed", `${removed.provider} (…${removed.last4})`)), providerKeyWireView(removed))
          }))
        ))
      .handle("createWebhook", ({ path, payload }) =>
        webhooks.create(path.id, payload).pipe(
          Effect.tap((webhook) => audited(path.id, "webhook.created", webhook.url)),
          Effect.map(createdWebhookView),
          adminErrors
        ))
      .handle("listWebhooks", ({ path }) =>
        webhooks.list(path.id).pipe(Effect.map((list) => ({ data: list.map(webhookView) })), adminErrors))
      .handle("removeWebhook", ({ path }) =>
        webhooks.remove(path.id, path.webhookId).pipe(
          Effect.tap((webhook) => audited(path.id, "webhook.removed", webhook.url)),
          Effect.map(webhookView),
          adminErrors
        ))
      .handle("webhookDeliveries", ({ path }) =>
        webhooks.deliveries(path.id, path.webhookId).pipe(Effect.map((lines) => ({ data: lines.map(deliveryView) })), adminErrors))
      // This instance's view, read from memory: nothing to fail.
      .handle("listUpstreams", () => Effect.sync(() => ({ data: routes.states().map(upstreamView) })))
      .handle("rotateCredentials", () =>
        adminErrors(credentials.rotate))
      .handle("runExport", ({ path, payload }) =>
        Effect.gen(function*() {
          const workspace = yield* adminErrors(workspaces.get(path.id))
          yield* admitWorkspaceExport(rateLimits, workspace).pipe(Effect.mapError((problem) => new AdminError(problem)))
          const data = yield* exports.run({ kind: path.dataType, workspace, from: payload.from, to: payload.to, createdBy: { label: "operator" } }).pipe(
            retryAfterQueueTimeout,
            Effect.tapErrorTag("ExportStorageFailure", (error) => Effect.logError("export storage failed", error.cause)),
            Effect.tapErrorTag("StorageFailure", (error) => Effect.logError("export query failed", error.cause)),
            Effect.mapError((failure) => {
              const { code, field, message, status } = asExportError(failure)
              return new AdminError({ status, code, message, ...(field ? { field } : {}) })
            })
          )
          yield* adminErrors(audited(
            path.id,
            "export.run",
            `${path.dataType} ${payload.from.date} ${payload.from.timezone} – ${payload.to.date} ${payload.to.timezone} (${data.recordCount} rows)`
          ))
          return { success: true as const, data }
        }))
      .handle("audit", ({ path, urlParams }) =>
        Effect.zipRight(
          workspaces.get(path.id),
          audit.list(path.id, { limit: urlParams.limit ?? 50, cursor: urlParams.cursor, action: urlParams.action })
        ).pipe(Effect.map(auditView), adminErrors))
      .handle("createWorkspace", ({ payload }) =>
        workspaces.create(payload.name, payload.settings ?? {}).pipe(
          Effect.tap((w) => audited(w.id, "workspace.created", w.name)),
          Effect.map(workspaceView),
          adminErrors
        ))
      .handle("getWorkspace", ({ path }) => workspaces.get(path.id).pipe(Effect.map(workspaceView), adminErrors))
      .handle("updateWorkspace", ({ path, payload }) =>
        workspaces.updateSettings(path.id, payload).pipe(
          Effect.tap(() => audited(path.id, "settings.changed", Object.keys({ ...payload, ...payload.settings }).join(", "))),
          Effect.map(workspaceView),
          adminErrors
        ))
      .handle("createApiKey", ({ path, payload }) =>
        keys.create(path.id, payload.name, payload.scopes, undefined, keyLimits(payload)).pipe(
          Effect.tap(({ record }) => audited(path.id, "api_key.created", `${record.name} (${record.displayPrefix})`)),
          Effect.map(({ key, record }) => ({ ...keyView(consoleKeyView(record, Option.isSome(record.budget) ? 0 : null)), key })),
          adminErrors
        ))
      .handle("listApiKeys", ({ path }) =>
        Effect.gen(function*() {
          const workspace = yield* workspaces.get(path.id)
          const views = yield* keyViewsWithSpend(budgets, workspace, yield* keys.list(path.id))
          return { data: views.map(keyView) }
        }).pipe(adminErrors))
      .handle("updateApiKey", ({ path, payload }) =>
        keys.update(path.id, path.keyId, keyLimits(payload)).pipe(
          Effect.tap((record) => audited(path.id, "api_key.changed", `${record.name} (${record.displayPrefix}): ${Object.keys(payload).join(", ")}`)),
          Effect.flatMap((record) => keyViewWithSpend(workspaces, budgets, record)),
          Effect.map(keyView),
          adminErrors
        ))
      .handle("revokeApiKey", ({ path }) =>
        keys.revoke(path.id, path.keyId).pipe(
          Effect.tap((record) => audited(path.id, "api_key.revoked", `${record.name} (${record.displayPrefix})`)),
          Effect.flatMap((record) => keyViewWithSpend(workspaces, budgets, record)),
          Effect.map(keyView),
          adminErrors
        ))
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
