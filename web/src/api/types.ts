/**
 * The console API's shapes, imported as types only from the server's Schema contracts (src/api/consoleApi.ts):
 * the pages and the server cannot drift apart, and nothing of Effect reaches the bundle (`import type` is erased).
 */
import type {
  ActivityRow as ActivityRowSchema,
  BudgetStatusView,
  ConsoleApiKeyView,
  ConsoleCreatedApiKey,
  ConsoleProviderKey,
  ConsoleSettings as ConsoleSettingsSchema,
  ConsoleWorkspace,
  InvitationView,
  LimitView,
  ModelView,
  PasswordResetView,
  RecentExportView,
  SessionView,
  UsageGroupBy,
  UsageRow as UsageRowSchema,
  WorkspaceMembership
} from "../../../src/api/consoleApi"
import type { AuditView, InvitedMember, MemberView } from "../../../src/api/schemas/members"
import type { UpstreamDeploymentView } from "../../../src/api/schemas/upstreams"
import type { UsageExportDataType, UsageExportResult } from "../../../src/api/schemas/usageExport"
import type { CreatedWebhook as CreatedWebhookSchema, WebhookDeliveryView, WebhookView } from "../../../src/api/schemas/webhooks"
import type { Scope as ScopeSchema } from "../../../src/domain/apiKey"
import type { Budget as BudgetSchema, BudgetPeriod as BudgetPeriodSchema } from "../../../src/domain/budgets"
import type { MemberRole } from "../../../src/domain/console"
import type { WorkspaceSettingsPatch } from "../../../src/domain/workspaceSettings"

export type { UsageExportDataType, UsageExportResult }

export type Role = typeof MemberRole.Type
export type Scope = typeof ScopeSchema.Type
export type WorkspaceRef = typeof WorkspaceMembership.Type
export type Session = typeof SessionView.Type
export type Person = NonNullable<Session["member"]>
export type ApiKey = typeof ConsoleApiKeyView.Type
export type CreatedApiKey = typeof ConsoleCreatedApiKey.Type
export type GroupBy = typeof UsageGroupBy.Type
export type UsageRow = typeof UsageRowSchema.Type
export type ActivityRow = typeof ActivityRowSchema.Type
export type ExportData = UsageExportResult["data"]
export type RecentExport = typeof RecentExportView.Type
export type Member = typeof MemberView.Type
export type Invitation = typeof InvitedMember.Type
export type InvitationInfo = typeof InvitationView.Type
export type PasswordResetInfo = typeof PasswordResetView.Type
export type AuditEntry = typeof AuditView.Type
export type WorkspaceSummary = typeof ConsoleWorkspace.Type
export type RateLimitReading = typeof LimitView.Type
export type WorkspaceModel = typeof ModelView.Type
export type ConsoleSettings = typeof ConsoleSettingsSchema.Type
export type ProviderKey = typeof ConsoleProviderKey.Type
export type SettingsPatch = WorkspaceSettingsPatch
export type UpstreamDeployment = typeof UpstreamDeploymentView.Type
export type Webhook = typeof WebhookView.Type
export type CreatedWebhook = typeof CreatedWebhookSchema.Type
export type WebhookDelivery = typeof WebhookDeliveryView.Type
export type Budget = typeof BudgetSchema.Type
export type BudgetPeriod = typeof BudgetPeriodSchema.Type
export type BudgetStatus = typeof BudgetStatusView.Type
/** A key's budget and expiry as created or changed: null removes one. */
export interface KeyLimits {
  readonly budget?: Budget | null
  readonly expiresAt?: string | null
}

export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly nextCursor: string | null
}
