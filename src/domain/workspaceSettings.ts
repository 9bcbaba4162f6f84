import { Schema } from "effect"
import { Budget } from "./budgets"
import { isTimeZone } from "./console"
import { type ProviderId, providerIds } from "./providerId"

/** Families of the public API that rate limits are counted in. */
export const LimitFamily = Schema.Literal("usage_export", "chat_completions", "messages", "fim", "embeddings", "responses")
export type LimitFamily = typeof LimitFamily.Type

const PositiveInt = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1, { message: () => "must be an integer ≥ 1" }))

export const LimitOverride = Schema.Struct({
  requestsPerMinute: Schema.optional(PositiveInt),
  tokensPerMinute: Schema.optional(PositiveInt)
})
export type LimitOverride = typeof LimitOverride.Type

/** Per-workspace limit overrides: per family, and per model within the forwarded families. */
export const RateLimitOverrides = Schema.Struct({
  families: Schema.optional(Schema.partial(Schema.Record({ key: LimitFamily, value: LimitOverride }))),
  models: Schema.optional(Schema.Record({ key: Schema.String, value: LimitOverride }))
})
export type RateLimitOverrides = typeof RateLimitOverrides.Type

const ModelList = Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))).pipe(Schema.maxItems(500))

/**
 * Models a workspace may use when it brings its own provider keys: replaces the catalog of that provider. One
 * optional list per provider id (Object.fromEntries cannot say which keys it makes, hence the cast).
 */
export const ByokModels = Schema.Struct(
  Object.fromEntries(providerIds.map((id) => [id, Schema.optional(ModelList)])) as {
    readonly [Id in ProviderId]: Schema.optional<typeof ModelList>
  }
)
export type ByokModels = typeof ByokModels.Type

/** An IANA time zone name (`UTC`, `Europe/Berlin`); raw offsets are refused. */
export const TimeZone = Schema.String.pipe(
  Schema.filter((zone) => isTimeZone(zone), { message: () => "must be an IANA time zone name such as UTC or Europe/Berlin" })
)

export const WorkspaceSettings = Schema.Struct({
  /** Replace user ids, emails and names in exports by stable pseudonyms. */
  anonymizeUsers: Schema.Boolean,
  /** Without leaderboards, user-identifying export columns stay empty. */
  leaderboardsEnabled: Schema.Boolean,
  /** Without workflows, the workflows export has no data. */
  workflowsEnabled: Schema.Boolean,
  byokModels: ByokModels,
  rateLimits: RateLimitOverrides,
  /** The workspace's time zone: the console's default for usage days and exports, and its budget's periods. */
  timezone: TimeZone,
  /** The workspace's spend cap (docs/budgets.md); null: none. */
  budget: Schema.NullOr(Budget)
})
export type WorkspaceSettings = typeof WorkspaceSettings.Type

export const defaultWorkspaceSettings: WorkspaceSettings = {
  anonymizeUsers: false,
  leaderboardsEnabled: true,
  workflowsEnabled: true,
  byokModels: {},
  rateLimits: {},
  timezone: "UTC",
  budget: null
}

/**
 * Bodies of the admin API and the console are refused on an unknown key, at every level: a Struct would
 * drop a typo (`rateLimits.family`, `expiresAt` on a key) silently and the request would succeed without
 * it. HttpApi decodes a payload with no parse options of its own, so they are annotated on the payload
 * schema; `errors: "all"` so that the 400 names every unknown key, not only the first. Stored settings stay
 * tolerant (StoredWorkspaceSettings), so old rows still read. Never on the forwarded endpoints, whose
 * clients send fields we may not know (docs/forwarded-endpoints.md).
 */
export const strictParse = { parseOptions: { onExcessProperty: "error", errors: "all" } } as const

/** A change to settings: every field optional; given fields replace the stored ones. */
export const WorkspaceSettingsPatch = Schema.partial(WorkspaceSettings).annotations(strictParse)
export type WorkspaceSettingsPatch = typeof WorkspaceSettingsPatch.Type

export const applySettingsPatch = (current: WorkspaceSettings, patch: WorkspaceSettingsPatch): WorkspaceSettings => ({
  ...current,
  ...Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined))
})

/** Stored settings may predate a field: fill what is missing with its default. */
export const StoredWorkspaceSettings = Schema.Struct({
  anonymizeUsers: Schema.optionalWith(Schema.Boolean, { default: () => defaultWorkspaceSettings.anonymizeUsers }),
  leaderboardsEnabled: Schema.optionalWith(Schema.Boolean, {
    default: () => defaultWorkspaceSettings.leaderboardsEnabled
  }),
  workflowsEnabled: Schema.optionalWith(Schema.Boolean, { default: () => defaultWorkspaceSettings.workflowsEnabled }),
  byokModels: Schema.optionalWith(ByokModels, { default: () => ({}) }),
  rateLimits: Schema.optionalWith(RateLimitOverrides, { default: () => ({}) }),
  timezone: Schema.optionalWith(Schema.String, { default: () => defaultWorkspaceSettings.timezone }),
  budget: Schema.optionalWith(Schema.NullOr(Budget), { default: () => null })
})
