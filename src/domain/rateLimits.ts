import type { ModelFamily } from "./models"
import type { LimitFamily, LimitOverride, RateLimitOverrides } from "./workspaceSettings"

/** The catalog family of a forwarded family's models: the Responses API serves the chat models. */
export const catalogFamily = (family: LimitFamily): ModelFamily | undefined =>
  family === "usage_export" ? undefined : family === "responses" ? "chat_completions" : family

export interface Limit {
  readonly requestsPerMinute: number
  readonly tokensPerMinute: number
}

/** The spec's limits: every family, per workspace, 500 requests and 60,000 tokens a minute. */
export const familyDefaults: Readonly<Record<LimitFamily, Limit>> = {
  usage_export: { requestsPerMinute: 500, tokensPerMinute: 60_000 },
  chat_completions: { requestsPerMinute: 500, tokensPerMinute: 60_000 },
  messages: { requestsPerMinute: 500, tokensPerMinute: 60_000 },
  fim: { requestsPerMinute: 500, tokensPerMinute: 60_000 },
  embeddings: { requestsPerMinute: 500, tokensPerMinute: 60_000 },
  responses: { requestsPerMinute: 500, tokensPerMinute: 60_000 }
}

/**
 * Each model of the forwarded families also has its own limit, within the family's. Models not
 * listed here may use the whole family limit; the heavy reasoning and large models get less.
 */
export const modelDefaults: Readonly<Record<string, Limit>> = {
  o1: { requestsPerMinute: 100, tokensPerMinute: 30_000 },
  "o1-preview": { requestsPerMinute: 100, tokensPerMinute: 30_000 },
  o3: { requestsPerMinute: 100, tokensPerMinute: 30_000 },
  "chatgen-5": { requestsPerMinute: 300, tokensPerMinute: 40_000 },
  "assistantmodel-sonnet-4-5-20250929": { requestsPerMinute: 300, tokensPerMinute: 40_000 },
  "codemodel-2501": { requestsPerMinute: 300, tokensPerMinute: 40_000 }
}

/** Families whose models have limits of their own (the spec: chat completion, messages, FIM; the Responses API). */
export const familiesWithModelLimits: ReadonlySet<LimitFamily> = new Set(["chat_completions", "messages", "fim", "responses"])

const withOverride = (base: Limit, override: LimitOverride | undefined): Limit => ({
  requestsPerMinute: override?.requestsPerMinute ?? base.requestsPerMinute,
  tokensPerMinute: override?.tokensPerMinute ?? base.tokensPerMinute
})

/** The family's limit for a workspace: the default, raised or lowered by the workspace's override. */
export const familyLimit = (family: LimitFamily, overrides: RateLimitOverrides): Limit =>
  withOverride(familyDefaults[family], overrides.families?.[family])

/** The model's own limit, or undefined where the family has no per-model limits. */
export const modelLimit = (family: LimitFamily, model: string, overrides: RateLimitOverrides): Limit | undefined => {
  if (!familiesWithModelLimits.has(family)) return undefined
  return withOverride(modelDefaults[model] ?? familyLimit(family, overrides), overrides.models?.[model])
}

/** Output tokens reserved when a request does not say how many it may generate. */
export const defaultOutputReservation: Readonly<Record<LimitFamily, number>> = {
  usage_export: 0,
  chat_completions: 1_000,
  messages: 1_000,
  fim: 256,
  embeddings: 0,
  responses: 1_000
}

/** Durations as the chat-completions protocol writes its reset headers: "20ms", "1s", "6m0s", "1.5s". */
export const resetDuration = (ms: number): string => {
  if (ms < 1_000) return `${Math.max(0, Math.ceil(ms))}ms`
  const seconds = ms / 1_000
  if (seconds < 60) return `${Math.round(seconds * 1000) / 1000}s`
  const minutes = Math.floor(seconds / 60)
  return `${minutes}m${Math.round((seconds - minutes * 60) * 1000) / 1000}s`
}
