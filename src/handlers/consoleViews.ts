import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { sessionCookie } from "../api/consoleApi"
import type { AppConfigShape } from "../config"
import type { ApiKeyRecord } from "../services/identity/ApiKeys"
import type { AuditPage } from "../services/workspaces/AuditLog"
import type { RecentExport } from "../services/exports/ExportService/index"
import type { Invitation, Member } from "../services/people/Members"
import type { Workspace } from "../domain/workspace"
import type { ProviderKeyView } from "../services/providerKeys/ProviderCredentials"
import type { DeploymentState } from "../services/forwarding/Routes"

/** Views shared by the admin API and the console API: the same shapes in both. */

export const memberView = (m: Member) => ({
  id: m.id,
  email: m.email,
  name: m.name,
  role: m.role,
  status: m.status,
  createdAt: m.createdAt.toISOString()
})

/** The invitation link: PUBLIC_URL + BASE_PATH + /console/invitations/{token}. */
export const invitationUrl = (config: Pick<AppConfigShape, "publicUrl" | "basePath">, token: string): string =>
  `${config.publicUrl.replace(/\/$/, "")}${config.basePath}/console/invitations/${token}`

/** The operator's password-reset link: PUBLIC_URL + BASE_PATH + /console/password-resets/{token}. */
export const passwordResetUrl = (config: Pick<AppConfigShape, "publicUrl" | "basePath">, token: string): string =>
  `${config.publicUrl.replace(/\/$/, "")}${config.basePath}/console/password-resets/${token}`

export const invitedView = (config: Pick<AppConfigShape, "publicUrl" | "basePath">, invitation: Invitation) => ({
  ...memberView(invitation.member),
  invitationUrl: invitationUrl(config, invitation.token),
  invitationExpiresAt: invitation.expiresAt.toISOString()
})

/** `spentUsd`: in the key's budget's current period (src/handlers/keySpend.ts reads it). */
export const keyView = (k: ApiKeyRecord, spentUsd: number | null) => ({
  id: k.id,
  name: k.name,
  displayPrefix: k.displayPrefix,
  scopes: k.scopes,
  createdAt: k.createdAt.toISOString(),
  revokedAt: Option.getOrNull(Option.map(k.revokedAt, (d) => d.toISOString())),
  lastUsedAt: Option.getOrNull(Option.map(k.lastUsedAt, (d) => d.toISOString())),
  budget: Option.getOrNull(k.budget),
  spentUsd,
  expiresAt: Option.getOrNull(Option.map(k.expiresAt, (d) => d.toISOString())),
  createdBy: k.createdBy
})

export const auditView = (page: AuditPage) => ({
  data: page.data.map((r) => ({ at: r.at.toISOString(), actor: r.actor, action: r.action, target: r.target, address: r.address })),
  nextCursor: page.nextCursor
})

export const recentExportView = (e: RecentExport) => ({
  ...e,
  dateRange: { ...e.dateRange },
  createdAt: e.createdAt.toISOString(),
  expiresAt: e.expiresAt.toISOString()
})

export const providerKeyWireView = (k: ProviderKeyView) => ({
  ...k,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null
})

/** A deployment's state on the wire: the optional fields only when they have a value. */
export const upstreamView = (d: DeploymentState) => ({
  route: d.route,
  deployment: d.deployment,
  kind: d.kind,
  state: d.state,
  ...(d.coolingUntil === undefined ? {} : { coolingUntil: d.coolingUntil.toISOString() }),
  ...(d.lastError === undefined ? {} : { lastError: d.lastError }),
  requests: d.requests,
  failures: d.failures
})

export const workspaceView = (w: Workspace) => ({ id: w.id, name: w.name, settings: w.settings, createdAt: w.createdAt.toISOString() })

/**
 * The client address, for the audit log and the sign-in throttle: the connection's peer, or the one its
 * trusted proxy names (TRUSTED_PROXIES), as `withClientAddress` (src/http/clientAddress.ts) resolved it.
 */
export const clientAddress = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => Option.getOrElse(request.remoteAddress, () => "unknown")
)

/** Sets (or, with null, clears) the session cookie on whatever the handler answers. */
export const setSessionCookie = (
  config: Pick<AppConfigShape, "publicUrl" | "basePath">,
  session: { readonly id: string; readonly maxAgeSeconds: number } | null
) => {
  const attributes = [
    `Path=${config.basePath}/console`,
    "HttpOnly",
    "SameSite=Strict",
    ...(config.publicUrl.startsWith("https:") ? ["Secure"] : []),
    `Max-Age=${session === null ? 0 : session.maxAgeSeconds}`
  ]
  const cookie = `${sessionCookie}=${session === null ? "" : session.id}; ${attributes.join("; ")}`
  return HttpApp.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeader(response, "set-cookie", cookie)))
}
