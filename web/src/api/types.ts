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
  readonly prefix: string
  readonly scopes: ReadonlyArray<Scope>
  readonly createdBy: string | null
  readonly createdAt: string
  readonly lastUsedAt: string | null
  readonly revokedAt: string | null
}

export interface CreatedApiKey {
  readonly id: string
  readonly key: string
  readonly scopes: ReadonlyArray<Scope>
}

export type GroupBy = "model" | "apiKey" | "family"

export interface UsageRow {
  readonly day: string
  readonly group: string
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

export interface Invitation {
  readonly id: string
  readonly email: string
  readonly role: Role
  readonly invitationUrl: string
  readonly invitationExpiresAt: string
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
  readonly createdAt?: string
}

/** A rate limit as the settings page shows it: the limit and, when the server tells, what remains now. */
export interface RateLimitReading {
  readonly family: string
  readonly model?: string
  readonly requestsPerMinute?: number
  readonly tokensPerMinute?: number
  readonly remainingRequests?: number
  readonly remainingTokens?: number
}

export type ConsoleSettings = WorkspaceSettings & {
  readonly timezone: string
  readonly rateLimitReadings?: ReadonlyArray<RateLimitReading>
}

export type SettingsPatch = Partial<Pick<ConsoleSettings, "anonymizeUsers" | "leaderboardsEnabled" | "workflowsEnabled" | "timezone" | "byokModels">>
