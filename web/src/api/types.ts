/**
 * The console API's shapes (DESIGN.md, "People, sessions and the web console"). Types shared with the
 * server are imported from its Schema contracts as types only: nothing of Effect reaches the bundle.
 */
import type { UsageExportDataType, UsageExportResult } from "../../../src/api/schemas/usageExport"
import type { WorkspaceSettings } from "../../../src/domain/workspaceSettings"

export type { UsageExportDataType, UsageExportResult, WorkspaceSettings }

export type Role = "admin" | "member"
export type Scope = "COMPLETION_API" | "USAGE_EXPORT_API"

export interface WorkspaceRef {
  readonly id: string
  readonly name: string
  readonly role: Role
}

export interface Person {
  readonly id: string
  readonly email: string
  readonly name: string | null
}

/** Who is signed in: a person (member of some workspaces) or the operator (admin everywhere). */
export interface Session {
  readonly member: Person | null
  readonly operator: boolean
  readonly workspaces: ReadonlyArray<WorkspaceRef>
}

export interface ApiKey {
  readonly id: string
  readonly name: string
  /** The first characters of the key, to recognise it. */
  readonly displayPrefix: string
  readonly scopes: ReadonlyArray<Scope>
  /** "operator", or the email of the person who created it. */
  readonly createdBy: string
  readonly createdAt: string
  readonly lastUsedAt: string | null
  readonly revokedAt: string | null
}

export interface CreatedApiKey extends ApiKey {
  readonly key: string
}

export type GroupBy = "model" | "apiKey" | "family"

export interface UsageRow {
  readonly day: string
  readonly group: string
  /** For groupBy=apiKey: the key's name (group is its id). */
  readonly label?: string
  readonly requests: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly costUsd: number
}

export interface ActivityRow {
  readonly day: string
  readonly messages: number
  readonly activeUsers: number
}

export interface Member {
  readonly id: string
  readonly email: string
  readonly name: string | null
  readonly role: Role
  readonly status: "invited" | "active"
}

export interface Invitation extends Member {
  readonly invitationUrl: string
  readonly invitationExpiresAt: string
}

/** What an invitation link is for, shown before the password is chosen. */
export interface InvitationInfo {
  readonly email: string
  readonly name: string | null
  readonly role: Role
  readonly workspace: { readonly id: string; readonly name: string }
  readonly expiresAt: string
  readonly hasPassword: boolean
}

export interface AuditEntry {
  readonly at: string
  readonly actor: string
  readonly action: string
  readonly target: string | null
  readonly address: string | null
}

export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly nextCursor: string | null
}

export interface WorkspaceSummary {
  readonly id: string
  readonly name: string
  readonly role: Role
  readonly createdAt: string | null
}

/** A rate limit as the settings page shows it: the limit and, when the server tells, what remains now. */
export interface RateLimitReading {
  readonly family: string
  readonly model: string | null
  readonly requestsPerMinute: number
  readonly tokensPerMinute: number
  readonly remainingRequests: number | null
  readonly remainingTokens: number | null
}

export type ConsoleSettings = WorkspaceSettings & {
  /** The workspace's IANA time zone: the overview's days. */
  readonly timezone: string
  /** Read-only: the limits in force (defaults and overrides) and what remains of each now. */
  readonly limits: ReadonlyArray<RateLimitReading>
}

export type SettingsPatch = Partial<Pick<ConsoleSettings, "anonymizeUsers" | "leaderboardsEnabled" | "workflowsEnabled" | "timezone" | "byokModels">>
