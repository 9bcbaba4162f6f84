import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { WorkspaceApi } from "../api/Api"
import { CurrentConsoleActor } from "../api/consoleApi"
import { ConsoleError, forbidden } from "../api/errors/consoleError"
import { AppConfig } from "../config"
import { actorLabel, type ConsoleActor, type MemberRole } from "../domain/console"
import { providerIds } from "../domain/providerId"
import { ApiKeys } from "../services/identity/ApiKeys"
import { type AuditAction, AuditLog } from "../services/workspaces/AuditLog"
import { ConsoleAccess, type WorkspaceAccess } from "../services/people/ConsoleAccess"
import { ExportService, type ExportFailure } from "../services/exports/ExportService/index"
import { Members } from "../services/people/Members"
import { RateLimits } from "../services/limits/RateLimits"
import { ModelCatalog } from "../services/forwarding/ModelCatalog"
import { Budgets } from "../services/limits/Budgets"
import { keyLimits, keyViewsWithSpend, keyViewWithSpend } from "./keySpend"
import { Routes } from "../services/forwarding/Routes"
import { UsageOverview } from "../services/usage/4-UsageOverview"
import { workspaceModels, WorkspaceLimits } from "../services/limits/WorkspaceLimits"
import { Workspaces } from "../services/workspaces/Workspaces"
import { type Workspace } from "../domain/workspace"
import { admitWorkspaceExport, retryAfterQueueTimeout } from "./exportAdmission"
import { asExportError } from "./exports"
import { auditView, clientAddress, invitedView, keyView, memberView, providerKeyWireView, recentExportView, upstreamView } from "./consoleViews"
import { ProviderCredentials, type ProviderKeyView } from "../services/providerKeys/ProviderCredentials"
import { type ServiceError, serviceErrorFields } from "./serviceErrors"
import { Webhooks } from "../services/webhooks/Webhooks"
import { createdWebhookView, deliveryView, webhookView } from "./webhookViews"

/** Service refusals as console errors (the admin API answers the same words: ./serviceErrors); another workspace's resources are 404 like missing ones. */
const consoleErrors = <A, R>(effect: Effect.Effect<A, ServiceError | ConsoleError, R>): Effect.Effect<A, ConsoleError, R> =>
  Effect.mapError(effect, (error) => (error._tag === "ConsoleError" ? error : new ConsoleError(serviceErrorFields(error))))

/** A provider as the console shows it without its key's details. */
const keyless = (provider: string, set: boolean) => ({ provider, set, last4: null, createdAt: null, createdBy: null, lastUsedAt: null, lastError: null })

/** Every provider, with or without a key; a member learns only whether one is set. */
const consoleProviderKeys = (keys: ReadonlyArray<ProviderKeyView>, role: MemberRole) =>
  providerIds.map((provider) => {
    const key = keys.find((k) => k.provider === provider)
    return key === undefined || role !== "admin" ? keyless(provider, key !== undefined) : { ...providerKeyWireView(key), set: true }
  })

const fromExport = (failure: ExportFailure): ConsoleError => {
  const e = asExportError(failure)
  return new ConsoleError({ status: e.status, code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) })
}

export const ConsoleHandlers = HttpApiBuilder.group(WorkspaceApi, "console", (handlers) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const access = yield* ConsoleAccess
    const workspaces = yield* Workspaces
    const members = yield* Members
    const keys = yield* ApiKeys
    const audit = yield* AuditLog
    const overview = yield* UsageOverview
    const limits = yield* WorkspaceLimits
    const exports = yield* ExportService
    const rateLimits = yield* RateLimits
    const budgets = yield* Budgets
    const credentials = yield* ProviderCredentials
    const routes = yield* Routes
    const catalog = yield* ModelCatalog
    const webhooks = yield* Webhooks

    /** The caller's access to the workspace, refused with 403 when `needed` is admin and the role is member. */
    const allowed = (workspaceId: string, needed: MemberRole) =>
      Effect.gen(function*() {
        const actor = yield* CurrentConsoleActor
        const granted = yield* access.workspace(actor, workspaceId)
        if (needed === "admin" && granted.role !== "admin") return yield* Effect.fail(forbidden())
        return { ...granted, actor }
      })

    /**
     * A console export counts against the workspace's usage-export limit like a public one (the limit is the
     * workspace's, whoever runs it); its rate-limit headers go on the answer, refused or not.
     */
    const admitExport = (workspace: Workspace) =>
      admitWorkspaceExport(rateLimits, workspace).pipe(
        Effect.mapError((problem) => new ConsoleError({ status: problem.status, code: problem.code, message: problem.message }))
      )

    const audited = (actor: ConsoleActor, workspaceId: string, action: AuditAction, target: string | null) =>
      Effect.flatMap(clientAddress, (address) =>
        audit.record({ workspaceIds: [workspaceId], actor: actorLabel(actor), action, target, address }))

    /** A member acts only on their own keys; others' are as invisible as they are in the list (404). */
    const ownKeyOnly = (workspaceId: string, keyId: string, actor: ConsoleActor) =>
      Effect.flatMap(keys.list(workspaceId), (list) => {
        const own = list.some((k) =>
          k.id === keyId && actor.kind === "person" && k.createdByPerson._tag === "Some" && k.createdByPerson.value === actor.personId
        )
        return own
          ? Effect.void
          : Effect.fail(new ConsoleError({ status: 404, code: "api_key_not_found", message: `No API key with id ${keyId} in this workspace.` }))
      })

    const settingsView = (granted: WorkspaceAccess) =>
      Effect.map(limits.readings(granted.workspace), (readings) => ({ ...granted.workspace.settings, limits: readings }))

    return handlers
      .handle("workspaces", ({ urlParams }) =>
        consoleErrors(Effect.gen(function*() {
          const actor = yield* CurrentConsoleActor
          if (actor.kind === "operator") {
            const page = yield* workspaces.list({ search: urlParams.search, limit: urlParams.limit ?? 50, cursor: urlParams.cursor })
            return {
              data: page.data.map((w) => ({ id: w.id, name: w.name, role: "admin" as const, createdAt: w.createdAt.toISOString() })),
              nextCursor: page.nextCursor
            }
          }
          // A person belongs to few workspaces: one page, filtered here.
          const term = urlParams.search?.trim().toLowerCase() ?? ""
          const list = (yield* members.workspacesOf(actor.personId)).filter((w) => term === "" || w.name.toLowerCase().includes(term) || w.id === term)
          return { data: list.map((w) => ({ ...w, createdAt: null })), nextCursor: null }
        })))
      .handle("createWorkspace", ({ payload }) =>
        consoleErrors(Effect.gen(function*() {
          const actor = yield* CurrentConsoleActor
          if (actor.kind !== "operator") return yield* Effect.fail(forbidden("Only the operator creates workspaces."))
          const workspace = yield* workspaces.create(payload.name, payload.settings ?? {})
          yield* audited(actor, workspace.id, "workspace.created", workspace.name)
          return { id: workspace.id, name: workspace.name, role: "admin" as const, createdAt: workspace.createdAt.toISOString() }
        })))
      .handle("upstreams", () =>
        Effect.gen(function*() {
          const actor = yield* CurrentConsoleActor
          // The deployments are the service's, not a workspace's: people of any role see none of them.
          if (actor.kind !== "operator") return yield* Effect.fail(forbidden("Only the operator sees the upstreams."))
          return { data: routes.states().map(upstreamView) }
        }))
      .handle("workspace", ({ path }) =>
        consoleErrors(Effect.map(allowed(path.id, "member"), ({ role, workspace }) => ({
          id: workspace.id,
          name: workspace.name,
          role,
          createdAt: workspace.createdAt.toISOString()
        }))))
      .handle("models", ({ path }) =>
        consoleErrors(Effect.map(allowed(path.id, "member"), ({ workspace }) => ({ data: workspaceModels(catalog, workspace) }))))
      .handle("listApiKeys", ({ path }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor, role, workspace } = yield* allowed(path.id, "member")
          const list = yield* keys.list(path.id)
          // Members see only the keys they created themselves.
          const visible = role === "admin" || actor.kind !== "person"
            ? list
            : list.filter((k) => k.createdByPerson._tag === "Some" && k.createdByPerson.value === actor.personId)
          return { data: yield* keyViewsWithSpend(budgets, workspace, visible) }
        })))
      .handle("createApiKey", ({ path, payload }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor, role } = yield* allowed(path.id, "member")
          if (role !== "admin" && payload.scopes.some((scope) => scope !== "COMPLETION_API")) {
            return yield* Effect.fail(forbidden("Only workspace administrators may create USAGE_EXPORT_API keys."))
          }
          const { key, record } = yield* keys.create(
            path.id,
            payload.name,
            payload.scopes,
            actor.kind === "operator" ? { label: "operator" } : { label: actor.email, personId: actor.personId },
            keyLimits(payload)
          )
          yield* audited(actor, path.id, "api_key.created", `${record.name} (${record.displayPrefix})`)
          return { ...keyView(record, Option.isSome(record.budget) ? 0 : null), key }
        })))
      .handle("updateApiKey", ({ path, payload }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor, role, workspace } = yield* allowed(path.id, "member")
          if (role !== "admin") yield* ownKeyOnly(path.id, path.keyId, actor)
          const record = yield* keys.update(path.id, path.keyId, keyLimits(payload))
          yield* audited(actor, path.id, "api_key.changed", `${record.name} (${record.displayPrefix}): ${Object.keys(payload).join(", ")}`)
          return (yield* keyViewsWithSpend(budgets, workspace, [record]))[0]!
        })))
      .handle("budget", ({ path }) =>
        consoleErrors(Effect.gen(function*() {
          const { workspace } = yield* allowed(path.id, "member")
          const budget = workspace.settings.budget
          if (budget === null) return { budget: null, spentUsd: null, reservedUsd: null, periodStart: null, resetAt: null }
          const status = yield* Effect.option(budgets.status(workspace, null, budget))
          return Option.match(status, {
            onNone: () => ({ budget, spentUsd: null, reservedUsd: null, periodStart: null, resetAt: null }),
            onSome: (s) => ({
              budget,
              spentUsd: s.spentUsd,
              reservedUsd: s.reservedUsd,
              periodStart: s.periodStart.toISOString(),
              resetAt: s.resetAt.toISOString()
            })
          })
        })))
      .handle("revokeApiKey", ({ path }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor, role } = yield* allowed(path.id, "member")
          if (role !== "admin") yield* ownKeyOnly(path.id, path.keyId, actor)
          const record = yield* keys.revoke(path.id, path.keyId)
          yield* audited(actor, path.id, "api_key.revoked", `${record.name} (${record.displayPrefix})`)
          return yield* keyViewWithSpend(workspaces, budgets, record)
        })))
      .handle("runExport", ({ path, payload }) =>
        Effect.gen(function*() {
          const { actor, workspace } = yield* consoleErrors(allowed(path.id, "admin"))
          yield* admitExport(workspace)
          const createdBy = { label: actorLabel(actor) }
          const data = yield* exports.run({ kind: path.dataType, workspace, from: payload.from, to: payload.to, createdBy }).pipe(
            retryAfterQueueTimeout,
            Effect.tapErrorTag("ExportStorageFailure", (error) => Effect.logError("export storage failed", error.cause)),
            Effect.tapErrorTag("StorageFailure", (error) => Effect.logError("export query failed", error.cause)),
            Effect.mapError(fromExport)
          )
          yield* consoleErrors(audited(
            actor,
            path.id,
            "export.run",
            `${path.dataType} ${payload.from.date} ${payload.from.timezone} – ${payload.to.date} ${payload.to.timezone} (${data.recordCount} rows)`
          ))
          return { success: true as const, data }
        }))
      .handle("recentExports", ({ path, urlParams }) =>
        Effect.gen(function*() {
          yield* consoleErrors(allowed(path.id, "admin"))
          const list = yield* exports.recent(path.id, urlParams.limit ?? 20).pipe(
            Effect.tapErrorTag("ExportStorageFailure", (error) => Effect.logError("export link failed", error.cause)),
            Effect.mapError(fromExport)
          )
          return { data: list.map(recentExportView) }
        }))
      .handle("usage", ({ path, urlParams }) =>
        consoleErrors(Effect.gen(function*() {
          const { workspace } = yield* allowed(path.id, "admin")
          const timezone = urlParams.timezone ?? workspace.settings.timezone
          const data = yield* overview.usage(path.id, { from: urlParams.from, to: urlParams.to, timezone }, urlParams.groupBy ?? "model")
          return { data }
        })))
      .handle("activity", ({ path, urlParams }) =>
        consoleErrors(Effect.gen(function*() {
          const { workspace } = yield* allowed(path.id, "admin")
          const timezone = urlParams.timezone ?? workspace.settings.timezone
          return { data: yield* overview.activity(path.id, { from: urlParams.from, to: urlParams.to, timezone }) }
        })))
      .handle("listMembers", ({ path }) =>
        consoleErrors(Effect.gen(function*() {
          yield* allowed(path.id, "admin")
          return { data: (yield* members.list(path.id)).map(memberView) }
        })))
      .handle("inviteMember", ({ path, payload }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor } = yield* allowed(path.id, "admin")
          const invitation = yield* members.invite(path.id, payload)
          yield* audited(actor, path.id, "member.invited", `${invitation.member.email} (${invitation.member.role})`)
          return invitedView(config, invitation)
        })))
      .handle("changeMember", ({ path, payload }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor } = yield* allowed(path.id, "admin")
          const member = yield* members.setRole(path.id, path.memberId, payload.role)
          yield* audited(actor, path.id, "member.changed", `${member.email} (${member.role})`)
          return memberView(member)
        })))
      .handle("removeMember", ({ path }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor } = yield* allowed(path.id, "admin")
          const member = yield* members.remove(path.id, path.memberId)
          yield* audited(actor, path.id, "member.removed", member.email)
          return memberView(member)
        })))
      .handle("providerKeys", ({ path }) =>
        consoleErrors(Effect.gen(function*() {
          const { role } = yield* allowed(path.id, "member")
          return { data: consoleProviderKeys(yield* credentials.list(path.id), role) }
        })))
      .handle("setProviderKey", ({ path, payload }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor } = yield* allowed(path.id, "admin")
          const saved = yield* credentials.set({ workspaceId: path.id, provider: path.provider, apiKey: payload.apiKey, actor: actorLabel(actor) })
          yield* audited(actor, path.id, "provider_key.set", `${saved.provider} (…${saved.last4})`)
          return { ...providerKeyWireView(saved), set: true }
        })))
      .handle("removeProviderKey", ({ path }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor } = yield* allowed(path.id, "admin")
          const removed = yield* credentials.remove(path.id, path.provider)
          if (Option.isNone(removed)) {
            return yield* Effect.fail(
              new ConsoleError({ status: 404, code: "provider_key_not_found", message: `The workspace has no ${path.provider} key.` })
            )
          }
          yield* audited(actor, path.id, "provider_key.removed", `${removed.value.provider} (…${removed.value.last4})`)
          return keyless(path.provider, false)
        })))
      .handle("webhooks", ({ path }) =>
        consoleErrors(Effect.gen(function*() {
          yield* allowed(path.id, "admin")
          return { data: (yield* webhooks.list(path.id)).map(webhookView) }
        })))
      .handle("createWebhook", ({ path, payload }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor } = yield* allowed(path.id, "admin")
          const webhook = yield* webhooks.create(path.id, payload)
          yield* audited(actor, path.id, "webhook.created", webhook.url)
          return createdWebhookView(webhook)
        })))
      .handle("removeWebhook", ({ path }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor } = yield* allowed(path.id, "admin")
          const webhook = yield* webhooks.remove(path.id, path.webhookId)
          yield* audited(actor, path.id, "webhook.removed", webhook.url)
          return webhookView(webhook)
        })))
      .handle("webhookDeliveries", ({ path }) =>
        consoleErrors(Effect.gen(function*() {
          yield* allowed(path.id, "admin")
          return { data: (yield* webhooks.deliveries(path.id, path.webhookId)).map(deliveryView) }
        })))
      .handle("settings", ({ path }) => consoleErrors(Effect.flatMap(allowed(path.id, "admin"), settingsView)))
      .handle("updateSettings", ({ path, payload }) =>
        consoleErrors(Effect.gen(function*() {
          const { actor, role } = yield* allowed(path.id, "admin")
          const workspace = yield* workspaces.updateSettings(path.id, { settings: payload })
          yield* audited(actor, path.id, "settings.changed", Object.keys(payload).join(", "))
          return yield* settingsView({ workspace, role })
        })))
      .handle("audit", ({ path, urlParams }) =>
        consoleErrors(Effect.gen(function*() {
          yield* allowed(path.id, "admin")
          return auditView(yield* audit.list(path.id, { limit: urlParams.limit ?? 50, cursor: urlParams.cursor, action: urlParams.action }))
        })))
  }))
