import { query, request } from "./client"
import type {
  ActivityRow, ApiKey, AuditEntry, BudgetStatus, ConsoleSettings, KeyLimits, CreatedApiKey, GroupBy, Invitation, InvitationInfo, Member, Page, PasswordResetInfo, Person,
  ProviderKey, RecentExport,
  Role, Scope, Session, SettingsPatch, UpstreamDeployment, UsageExportDataType, UsageExportResult, UsageRow, WorkspaceModel, WorkspaceRef,
  WorkspaceSummary, Webhook, CreatedWebhook, WebhookDelivery
} from "./types"

/** What the session endpoints answer; the operator has no person (`member` null or absent). */
interface SessionBody {
  readonly member?: Person | null
  readonly operator?: boolean
  readonly workspaces?: ReadonlyArray<WorkspaceRef>
}

const toSession = (body: SessionBody): Session => ({
  member: body.member ?? null,
  operator: body.operator === true,
  workspaces: body.workspaces ?? []
})

const ws = (workspaceId: string, rest: string): string => `workspaces/${encodeURIComponent(workspaceId)}/${rest}`

export const getSession = async (): Promise<Session> =>
  toSession(await request<SessionBody>("GET", "session", undefined, { quietUnauthorized: true }))

export const signIn = async (email: string, password: string): Promise<Session> =>
  toSession(await request<SessionBody>("POST", "session", { email, password }, { quietUnauthorized: true }))

export const signInAsOperator = async (adminToken: string): Promise<Session> =>
  toSession(await request<SessionBody>("POST", "session", { adminToken }, { quietUnauthorized: true }))

export const signOut = (): Promise<void> => request("DELETE", "session", undefined, { quietUnauthorized: true })

export const getInvitation = (token: string): Promise<InvitationInfo> =>
  request("GET", `invitations/${encodeURIComponent(token)}`, undefined, { quietUnauthorized: true })

export const getWorkspace = (workspaceId: string): Promise<WorkspaceSummary> => request("GET", `workspaces/${encodeURIComponent(workspaceId)}`)

/** Creates the account of an email that has none (a new password, and a name) and signs in. */
export const acceptWithNewPassword = async (token: string, password: string, name: string): Promise<Session> =>
  toSession(await request<SessionBody>(
    "POST",
    `invitations/${encodeURIComponent(token)}`,
    name.trim() === "" ? { password } : { password, name: name.trim() },
    { quietUnauthorized: true }
  ))

/** The invited person signs in on the invitation's page with their current password, and joins. */
export const acceptWithCurrentPassword = async (token: string, currentPassword: string): Promise<Session> =>
  toSession(await request<SessionBody>("POST", `invitations/${encodeURIComponent(token)}`, { currentPassword }, { quietUnauthorized: true }))

/** The invited person, already signed in as themselves, joins. */
export const acceptAsSignedIn = async (token: string): Promise<Session> =>
  toSession(await request<SessionBody>("POST", `invitations/${encodeURIComponent(token)}`, {}, { quietUnauthorized: true }))

/** The signed-in person's own password; their other sessions end. */
export const changePassword = (currentPassword: string, newPassword: string): Promise<void> =>
  request("PUT", "session/password", { currentPassword, newPassword })

export const getPasswordReset = (token: string): Promise<PasswordResetInfo> =>
  request("GET", `password-resets/${encodeURIComponent(token)}`, undefined, { quietUnauthorized: true })

/** Sets the password with the operator's reset link and signs in. */
export const resetPassword = async (token: string, password: string): Promise<Session> =>
  toSession(await request<SessionBody>("POST", `password-resets/${encodeURIComponent(token)}`, { password }, { quietUnauthorized: true }))

export const listApiKeys = (workspaceId: string): Promise<{ readonly data: ReadonlyArray<ApiKey> }> =>
  request("GET", ws(workspaceId, "api-keys"))

export const createApiKey = (workspaceId: string, name: string, scopes: ReadonlyArray<Scope>, limits: KeyLimits = {}): Promise<CreatedApiKey> =>
  request("POST", ws(workspaceId, "api-keys"), { name, scopes, ...limits })

export const updateApiKey = (workspaceId: string, keyId: string, limits: KeyLimits): Promise<ApiKey> =>
  request("PATCH", ws(workspaceId, `api-keys/${encodeURIComponent(keyId)}`), limits)

/** The workspace's budget with what its period spent and what requests in progress hold. */
export const getBudget = (workspaceId: string): Promise<BudgetStatus> => request("GET", ws(workspaceId, "budget"))

export const revokeApiKey = (workspaceId: string, keyId: string): Promise<ApiKey> =>
  request("DELETE", ws(workspaceId, `api-keys/${encodeURIComponent(keyId)}`))

export const listProviderKeys = (workspaceId: string): Promise<{ readonly data: ReadonlyArray<ProviderKey> }> =>
  request("GET", ws(workspaceId, "provider-keys"))

export const setProviderKey = (workspaceId: string, provider: string, apiKey: string): Promise<ProviderKey> =>
  request("PUT", ws(workspaceId, `provider-keys/${encodeURIComponent(provider)}`), { apiKey })

export const removeProviderKey = (workspaceId: string, provider: string): Promise<ProviderKey> =>
  request("DELETE", ws(workspaceId, `provider-keys/${encodeURIComponent(provider)}`))

export const listWebhooks = (workspaceId: string): Promise<{ readonly data: ReadonlyArray<Webhook> }> =>
  request("GET", ws(workspaceId, "webhooks"))

export const createWebhook = (workspaceId: string, url: string): Promise<CreatedWebhook> =>
  request("POST", ws(workspaceId, "webhooks"), { url })

export const removeWebhook = (workspaceId: string, webhookId: string): Promise<Webhook> =>
  request("DELETE", ws(workspaceId, `webhooks/${encodeURIComponent(webhookId)}`))

export const listWebhookDeliveries = (workspaceId: string, webhookId: string): Promise<{ readonly data: ReadonlyArray<WebhookDelivery> }> =>
  request("GET", ws(workspaceId, `webhooks/${encodeURIComponent(webhookId)}/deliveries`))

export const listModels = (workspaceId: string): Promise<{ readonly data: ReadonlyArray<WorkspaceModel> }> =>
  request("GET", ws(workspaceId, "models"))

export const getUsage = (
  workspaceId: string,
  range: { readonly from: string; readonly to: string; readonly timezone: string },
  groupBy: GroupBy
): Promise<{ readonly data: ReadonlyArray<UsageRow> }> =>
  request("GET", ws(workspaceId, `usage${query({ ...range, groupBy })}`))

export const getActivity = (
  workspaceId: string,
  range: { readonly from: string; readonly to: string; readonly timezone: string }
): Promise<{ readonly data: ReadonlyArray<ActivityRow> }> =>
  request("GET", ws(workspaceId, `activity${query(range)}`))

export const runExport = (
  workspaceId: string,
  dataType: UsageExportDataType,
  from: { readonly date: string; readonly timezone: string },
  to: { readonly date: string; readonly timezone: string }
): Promise<UsageExportResult> => request("POST", ws(workspaceId, `exports/${dataType}`), { from, to })

/** The workspace's exports (from any browser, the CLI or the public endpoints) whose links still live. */
export const listRecentExports = (workspaceId: string, limit = 20): Promise<{ readonly data: ReadonlyArray<RecentExport> }> =>
  request("GET", ws(workspaceId, `exports${query({ limit })}`))

export const listMembers = (workspaceId: string): Promise<{ readonly data: ReadonlyArray<Member> }> =>
  request("GET", ws(workspaceId, "members"))

export const inviteMember = (workspaceId: string, email: string, name: string, role: Role): Promise<Invitation> =>
  request("POST", ws(workspaceId, "members"), name.trim() === "" ? { email, role } : { email, name: name.trim(), role })

export const changeRole = (workspaceId: string, memberId: string, role: Role): Promise<Member> =>
  request("PATCH", ws(workspaceId, `members/${encodeURIComponent(memberId)}`), { role })

export const removeMember = (workspaceId: string, memberId: string): Promise<Member> =>
  request("DELETE", ws(workspaceId, `members/${encodeURIComponent(memberId)}`))

export const getSettings = (workspaceId: string): Promise<ConsoleSettings> => request("GET", ws(workspaceId, "settings"))

export const saveSettings = (workspaceId: string, patch: SettingsPatch): Promise<ConsoleSettings> =>
  request("PATCH", ws(workspaceId, "settings"), patch)

export const listAudit = (workspaceId: string, options: { readonly cursor?: string; readonly action?: string }): Promise<Page<AuditEntry>> =>
  request("GET", ws(workspaceId, `audit${query({ limit: 50, cursor: options.cursor, action: options.action })}`))

export const listWorkspaces = (options: { readonly search?: string; readonly cursor?: string }): Promise<Page<WorkspaceSummary>> =>
  request("GET", `workspaces${query({ limit: 20, search: options.search, cursor: options.cursor })}`)

export const createWorkspace = (name: string): Promise<WorkspaceSummary> => request("POST", "workspaces", { name })

/** The operator's view of every upstream deployment (this instance's counts and cooldowns). */
export const listUpstreams = (): Promise<{ readonly data: ReadonlyArray<UpstreamDeployment> }> => request("GET", "upstreams")
