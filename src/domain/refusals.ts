// Why a forwarded request is refused or failed before its first byte, said once and independent of
// any wire format: no HTTP status, no provider wording. Each provider's dialect renders them at the
// edge (src/providers/render.ts). Tagged values, not Errors: refusals come in floods and nothing
// reads their stacks, so none is captured.
import { Data } from "effect"
import type { LimitFamily } from "./workspaceSettings"
import type { Problem } from "./problem"
import type { BudgetPeriod, BudgetScope } from "./budgets"

/** One rate-limit bucket as the limiter read it. */
export interface LimitReading {
  readonly limit: number
  readonly remaining: number
  /** Milliseconds until the bucket is full again. */
  readonly resetMs: number
}

/** The tightest request and token buckets of a decision, and when they were read (epoch ms). */
export interface LimitReadings {
  readonly requests: LimitReading
  readonly tokens: LimitReading
  readonly at: number
}

/** The region is not one the provider serves. */
export class RegionNotServed extends Data.TaggedClass("RegionNotServed")<{ readonly region: string }> {}

/**
 * The model is not in the catalog (nor the workspace's own models) of the endpoint. `modelsPath`: where the
 * models the workspace may use are listed (the provider's models list under BASE_PATH, in the request's region).
 */
export class ModelNotFound extends Data.TaggedClass("ModelNotFound")<{
  readonly model: string
  readonly modelsPath?: string | undefined
}> {}

/** The endpoint serves one model only, and this is not it. */
export class ModelNotSupported extends Data.TaggedClass("ModelNotSupported")<{
  readonly model: string
  readonly supported: string
  readonly modelsPath?: string | undefined
}> {}

/** A field the endpoint's model does not take (the schema accepts it for other models). */
export class FieldNotSupported extends Data.TaggedClass("FieldNotSupported")<{
  readonly field: string
  readonly model: string
}> {}

/** An output limit (max_tokens …) beyond what the model can write. */
export class OutputLimitExceeded extends Data.TaggedClass("OutputLimitExceeded")<{
  readonly field: string
  readonly requested: number
  readonly limit: number
  readonly model: string
}> {}

/**
 * The prompt (with the output asked for, when `maxTokens` is given) does not fit the model's
 * context; `field` is the one to change.
 */
export class ContextTooLong extends Data.TaggedClass("ContextTooLong")<{
  readonly field: "max_tokens" | "prompt"
  readonly promptTokens: number
  readonly maxTokens?: number | undefined
  readonly contextLength: number
}> {}

/**
 * A prompt that cannot fit its model's context: found on its length alone (`length`: more characters than the
 * context's tokens can hold, requestBounds.maxTokenBytes each), before any tokenizing, or counted (`tokens`: at
 * least `tokens`). `field` is the one to shorten.
 */
export class PromptTooLong extends Data.TaggedClass("PromptTooLong")<{
  readonly field: string
  readonly found: "length" | "tokens"
  /** Characters (`length`) or tokens counted so far (`tokens`). */
  readonly amount: number
  readonly contextLength: number
}> {}

/**
 * Too many large request bodies are being read at once (MiBs to parse, decode and count): on this instance
 * (`instance`, the service's to relieve) or from the request's workspace (`workspace`, its share): retry shortly.
 */
export class LargeBodiesBusy extends Data.TaggedClass("LargeBodiesBusy")<{
  readonly scope: "instance" | "workspace"
  /** Large bodies read at once in that scope. */
  readonly limit: number
}> {}

/** One input of a batch over the model's per-input limit (counted at least to `tokens`). */
export class InputTooLong extends Data.TaggedClass("InputTooLong")<{
  readonly param: string
  readonly tokens: number
  readonly limit: number
}> {}

/**
 * More messages than the model's context can take at their minimum cost: `exactly` when counted on
 * the decoded request, else `more than` (counted on the raw bytes, before parsing).
 */
export class TooManyMessages extends Data.TaggedClass("TooManyMessages")<{
  readonly counted: "exactly" | "more than"
  readonly messages: number
  readonly leastTokens: number
  readonly contextLength: number
}> {}

/** The caller's beta header is not a list of feature names. */
export class InvalidBetaHeader extends Data.TaggedClass("InvalidBetaHeader")<{ readonly header: string }> {}

/** A request the framework would refuse (a body that does not decode, too large, not JSON). */
export class InvalidRequest extends Data.TaggedClass("InvalidRequest")<{ readonly problem: Problem }> {}

/** The workspace spent its budget: retry after `retryAfterMs`. `model` names the model's own limit when that is the one spent. */
export class RateLimited extends Data.TaggedClass("RateLimited")<{
  readonly readings: LimitReadings
  readonly retryAfterMs: number
  readonly family: LimitFamily
  readonly model?: string | undefined
}> {}

/** A request larger than a whole minute's token budget: waiting would not help. */
export class RequestExceedsLimit extends Data.TaggedClass("RequestExceedsLimit")<{
  /** The buckets as they are (undefined when they could not be read). */
  readonly readings?: LimitReadings | undefined
  readonly tokens: number
  readonly limit: number
  /** Set when the limit is the model's own. */
  readonly model?: string | undefined
}> {}

/** The limits cannot be checked and the setting is to fail closed. */
export class LimitsUnavailable extends Data.TaggedClass("LimitsUnavailable")<{}> {}

/**
 * The request's usage record could not be made durable now (the usage journal's disk refuses writes)
 * and the setting (USAGE_JOURNAL_REQUIRED) is to refuse billable requests rather than keep records in
 * memory only.
 */
export class UsageNotDurable extends Data.TaggedClass("UsageNotDurable")<{}> {}

/**
 * A budget that applies (the key's or the workspace's) cannot hold the request's largest possible cost on top
 * of what its period has spent and reserved: refused until `resetAt` (epoch ms), when the period ends.
 */
export class BudgetExceeded extends Data.TaggedClass("BudgetExceeded")<{
  readonly scope: BudgetScope
  readonly amountUsd: number
  readonly period: BudgetPeriod
  readonly resetAt: number
  /** The workspace's time zone: the period's and the reset's. */
  readonly timezone: string
  readonly readings?: LimitReadings | undefined
}> {}

/** A budget applies but its store cannot be asked: refused, never let through unchecked. */
export class BudgetUnavailable extends Data.TaggedClass("BudgetUnavailable")<{ readonly readings?: LimitReadings | undefined }> {}

/** What an admitted request's failure is answered with besides its refusal. */
export interface Admitted {
  /** The workspace's limits after the admission. */
  readonly readings?: LimitReadings | undefined
  /** The upstream's bounded retry hints (and the simulated marker), passed on. */
  readonly hints: Readonly<Record<string, string>>
}

/** How an upstream could not be used: too many large answers being read, no answer in time, unreadable, unreachable. */
export class UpstreamUnavailable extends Data.TaggedClass("UpstreamUnavailable")<Admitted & {
  readonly reason: "busy" | "timeout" | "malformed" | "unreachable"
}> {}

/** The upstream refused the service's own credentials. */
export class UpstreamCredentialsRefused extends Data.TaggedClass("UpstreamCredentialsRefused")<Admitted> {}

/**
 * The upstream refused the workspace's own provider key (401/403): the workspace's to fix, so a 4xx, never the
 * service's 502; remembered as the key's last error.
 */
export class WorkspaceKeyRefused extends Data.TaggedClass("WorkspaceKeyRefused")<Admitted & {
  readonly provider: string
  readonly status: number
}> {}

/**
 * The workspace has its own key for the provider but this service cannot use it (sealed under a CREDENTIALS_KEY
 * it is no longer given, or the store did not answer): the request is not sent with the service's key instead.
 */
export class WorkspaceKeyUnusable extends Data.TaggedClass("WorkspaceKeyUnusable")<Admitted & {
  readonly provider: string
  readonly reason: "unreadable" | "unavailable"
}> {}

/** The upstream answered a 5xx that is not one of the protocol's own: its failure, not the caller's. */
export class UpstreamAnswered5xx extends Data.TaggedClass("UpstreamAnswered5xx")<Admitted & { readonly status: number }> {}

/** The upstream refused the caller's request: its own answer (status, code, message), read and scrubbed, passes through. */
export class UpstreamRefused extends Data.TaggedClass("UpstreamRefused")<Admitted & { readonly answer: Problem }> {}

/** The service is stopping and the request's time is up: a stream still open when the shutdown grace ends. */
export class ServiceStopping extends Data.TaggedClass("ServiceStopping")<{}> {}

/** Refusals of a request itself, before it reaches the rate limits. */
export type RequestRefusal =
  | RegionNotServed
  | ModelNotFound
  | ModelNotSupported
  | FieldNotSupported
  | OutputLimitExceeded
  | ContextTooLong
  | PromptTooLong
  | InputTooLong
  | LargeBodiesBusy
  | TooManyMessages
  | InvalidBetaHeader
  | InvalidRequest

/** Refusals of the rate limits. */
export type LimitRefusal = RateLimited | RequestExceedsLimit | LimitsUnavailable

/** Refusals of the budgets, after the rate limits admitted the request. */
export type BudgetRefusal = BudgetExceeded | BudgetUnavailable

/** Failures of an admitted request's upstream exchange. */
export type UpstreamRefusal =
  | UpstreamUnavailable
  | UpstreamCredentialsRefused
  | UpstreamAnswered5xx
  | UpstreamRefused
  | WorkspaceKeyRefused
  | WorkspaceKeyUnusable

export type Refusal = RequestRefusal | LimitRefusal | BudgetRefusal | UpstreamRefusal | ServiceStopping | UsageNotDurable

/**
 * Whether the refusal came through the rate limits (the request spent its budget, or was refused by them),
 * or is the service's own state, which no workspace is charged for.
 */
export const wasAdmitted = (refusal: Refusal): boolean => admittedTags.has(refusal._tag)

const admittedTags: ReadonlySet<Refusal["_tag"]> = new Set<Refusal["_tag"]>([
  "RateLimited",
  "RequestExceedsLimit",
  "LimitsUnavailable",
  "BudgetExceeded",
  "BudgetUnavailable",
  "UsageNotDurable",
  "UpstreamUnavailable",
  "UpstreamCredentialsRefused",
  "UpstreamAnswered5xx",
  "UpstreamRefused",
  "WorkspaceKeyRefused",
  "WorkspaceKeyUnusable",
  "ServiceStopping"
])
