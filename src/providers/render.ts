import type { Problem } from "../domain/problem"
import type { LimitFamily } from "../domain/workspaceSettings"
import type { LimitReadings, Refusal, RequestRefusal, UpstreamRefusal } from "../domain/refusals"
import { largeBodyBytes, maxTokenBytes } from "../domain/requestBounds"
import { resetText, usdText } from "../domain/budgets"
import { retryHeaders, xRateLimitHeaders } from "./rateLimitHeaders"

/** A refusal as an answer: the format-neutral problem and the headers to answer with. */
export interface Rendered {
  readonly problem: Problem
  readonly headers: Readonly<Record<string, string>>
}

/** Who renders: a provider's dialect, or the exports (which word nothing of their own). */
export interface RefusalStyle {
  readonly rateLimitHeaders: (readings: LimitReadings) => Record<string, string>
  readonly word?: (refusal: RequestRefusal) => Problem | undefined
}

const noHeaders: Readonly<Record<string, string>> = {}

const familyNames: Readonly<Record<LimitFamily, string>> = {
  usage_export: "usage export",
  chat_completions: "chat completion",
  messages: "messages",
  fim: "FIM completion",
  embeddings: "embeddings",
  responses: "Responses API"
}

/** The shared wording of a request refusal, for dialects that have none of their own. */
const requestProblem = (refusal: RequestRefusal): Problem => {
  switch (refusal._tag) {
    case "RegionNotServed":
      return { status: 404, code: "region_not_found", message: `Region '${refusal.region}' is not served here.`, param: "region" }
    case "ModelNotFound":
      return {
        status: 404,
        code: "model_not_found",
        message: `The model '${refusal.model}' does not exist or you do not have access to it.`,
        param: "model"
      }
    case "ModelNotSupported":
      return {
        status: 400,
        code: "invalid_model",
        message: `Invalid model: ${refusal.model}. Use ${refusal.supported}.`,
        param: "model"
      }
    case "FieldNotSupported":
      return { status: 400, code: "invalid_value", message: `${refusal.model} does not support '${refusal.field}'.`, param: refusal.field }
    case "OutputLimitExceeded":
      return {
        status: 400,
        code: "invalid_value",
        message: `${refusal.field} is too large: ${refusal.requested}. The model writes at most ${refusal.limit} tokens.`,
        param: refusal.field
      }
    case "ContextTooLong":
      return refusal.field === "max_tokens"
        ? {
          status: 400,
          code: "context_length_exceeded",
          message:
            `max_tokens ${refusal.maxTokens} plus the prompt's ${refusal.promptTokens} tokens (prompt and suffix, estimated at four characters a token) exceeds the model's context length of ${refusal.contextLength} tokens: lower max_tokens or shorten the prompt.`,
          param: "max_tokens"
        }
        : {
          status: 400,
          code: "context_length_exceeded",
          message:
            `The prompt and suffix have about ${refusal.promptTokens} tokens (estimated at four characters a token), more than the model's context length of ${refusal.contextLength} tokens.`,
          param: "prompt"
        }
    case "PromptTooLong":
      return {
        status: 400,
        code: "context_length_exceeded",
        message: refusal.found === "length"
          ? `${refusal.field}: ${refusal.amount} characters cannot fit the model's context of ${refusal.contextLength} tokens (a token holds at most ${maxTokenBytes} bytes). Shorten the ${refusal.field}.`
          : `${refusal.field}: at least ${refusal.amount} tokens, more than the model's context of ${refusal.contextLength} tokens. Shorten the ${refusal.field}.`,
        param: refusal.field
      }
    case "LargeBodiesBusy":
      return refusal.scope === "instance"
        ? {
          status: 503,
          code: "server_busy",
          message: `The service is reading ${refusal.limit} large request bodies at once, its most. Retry shortly.`
        }
        : {
          status: 429,
          code: "too_many_large_bodies",
          message:
            `This workspace is sending more than ${refusal.limit} large request bodies (over ${largeBodyBytes / (1024 * 1024)} MiB) at once. Retry shortly, or send fewer at a time.`
        }
    case "InputTooLong":
      return {
        status: 400,
        code: "context_length_exceeded",
        message:
          `${refusal.param} has more than ${refusal.limit} tokens (at least ${refusal.tokens}); the maximum per input is ${refusal.limit}.`,
        param: refusal.param
      }
    case "TooManyMessages":
      return {
        status: 400,
        code: "context_length_exceeded",
        message: refusal.counted === "exactly"
          ? `messages: ${refusal.messages} messages need at least ${refusal.leastTokens} tokens, more than the model's context of ${refusal.contextLength} tokens.`
          : `messages: more than ${refusal.messages} messages need more tokens than the model's context of ${refusal.contextLength} tokens.`,
        param: "messages"
      }
    case "InvalidBetaHeader":
      return {
        status: 400,
        code: "invalid_request_error",
        message: `${refusal.header}: expected a comma-separated list of beta feature names.`,
        param: refusal.header
      }
    case "InvalidRequest":
      return refusal.problem
  }
}

/** An unknown model's refusal, in any wording, ends by saying where the workspace's models are listed. */
const namingModelsList = (refusal: RequestRefusal, problem: Problem): Problem =>
  (refusal._tag === "ModelNotFound" || refusal._tag === "ModelNotSupported") && refusal.modelsPath !== undefined
    ? { ...problem, message: `${problem.message} The models this workspace may use are listed at GET ${refusal.modelsPath}.` }
    : problem

/** Upstream failures are the service's answer (502, 503, 504), except the upstream's own refusal of the request. */
const upstreamProblem = (refusal: UpstreamRefusal): Problem => {
  switch (refusal._tag) {
    case "UpstreamRefused":
      return refusal.answer
    case "UpstreamCredentialsRefused":
      return { status: 502, code: "upstream_credentials", message: "The upstream provider refused this service's credentials." }
    case "UpstreamAnswered5xx":
      return { status: 502, code: "upstream_error", message: `The upstream provider failed (status ${refusal.status}).` }
    case "WorkspaceKeyRefused":
      return {
        status: 403,
        code: "provider_key_refused",
        message: `${refusal.provider} refused this workspace's own provider key (it answered ${refusal.status}). ` +
          "A workspace admin can replace the key in the console's Settings, or remove it to use the service's key."
      }
    case "WorkspaceKeyUnusable":
      return refusal.reason === "unreadable"
        ? {
          status: 503,
          code: "provider_key_unreadable",
          message: `This workspace's own ${refusal.provider} key cannot be decrypted by the service (CREDENTIALS_KEY changed). ` +
            "The operator must give the previous key as CREDENTIALS_KEY_PREVIOUS, or the key must be saved again."
        }
        : { status: 503, code: "unavailable", message: "This workspace's provider key cannot be read right now. Retry shortly." }
    case "UpstreamUnavailable":
      switch (refusal.reason) {
        case "busy":
          return {
            status: 503,
            code: "upstream_busy",
            message: "The service is reading too many large upstream answers at once. Retry shortly."
          }
        case "timeout":
          return { status: 504, code: "upstream_timeout", message: "The upstream provider did not answer in time." }
        case "malformed":
          return { status: 502, code: "upstream_malformed", message: "The upstream provider sent an answer that could not be read." }
        case "unreachable":
          return { status: 502, code: "upstream_unavailable", message: "The upstream provider could not be reached." }
      }
  }
}

/** The problem of a refusal in a style, without its headers (for a stream's in-band error). */
export const problemOf = (style: RefusalStyle, refusal: Refusal): Problem => renderRefusal(style, refusal).problem

/** The one renderer of refusals: status, body fields and headers, in the style of whoever answers. */
export const renderRefusal = (style: RefusalStyle, refusal: Refusal): Rendered => {
  switch (refusal._tag) {
    case "RateLimited": {
      const what = refusal.model !== undefined ? `model ${refusal.model}` : `${familyNames[refusal.family]} requests of this workspace`
      return {
        problem: {
          status: 429,
          code: "rate_limit_exceeded",
          message: `Rate limit reached for ${what}. Retry in ${Math.ceil(refusal.retryAfterMs / 1_000)} s, or ask for a higher limit.`
        },
        headers: { ...style.rateLimitHeaders(refusal.readings), ...retryHeaders(refusal.retryAfterMs) }
      }
    }
    case "RequestExceedsLimit":
      return {
        problem: {
          status: 429,
          code: "request_exceeds_limit",
          message: `This request needs about ${refusal.tokens} tokens, more than the limit of ${refusal.limit} tokens per minute${
            refusal.model !== undefined ? ` for ${refusal.model}` : ""
          }. Lower max_tokens or the input, or ask for a higher limit.`
        },
        // No retry-after: waiting would not help, so the client libraries must not retry it.
        headers: { ...(refusal.readings === undefined ? noHeaders : style.rateLimitHeaders(refusal.readings)), "x-should-retry": "false" }
      }
    case "LargeBodiesBusy":
      // Not a rate limit of the workspace's buckets: no limit headers, a short retry.
      return { problem: requestProblem(refusal), headers: retryHeaders(1_000) }
    case "LimitsUnavailable":
      return {
        problem: { status: 503, code: "rate_limit_unavailable", message: "Rate limits cannot be checked right now. Retry shortly." },
        headers: retryHeaders(1_000)
      }
    case "BudgetExceeded": {
      const whose = refusal.scope === "key" ? "This API key's" : "This workspace's"
      const resets = resetText(refusal.resetAt, refusal.timezone)
      const seconds = Math.max(1, Math.ceil((refusal.resetAt - Date.now()) / 1_000))
      return {
        problem: {
          status: 429,
          code: "budget_exceeded",
          message: `${whose} budget of ${usdText(refusal.amountUsd)} per ${refusal.period} is spent or held by requests in progress: ` +
            `this request's largest possible cost does not fit. It resets at ${resets} (${refusal.timezone}).`
        },
        // Until the period ends: the client libraries must not retry it meanwhile.
        headers: {
          ...(refusal.readings === undefined ? noHeaders : style.rateLimitHeaders(refusal.readings)),
          "retry-after": String(seconds),
          "x-should-retry": "false"
        }
      }
    }
    case "BudgetUnavailable":
      return {
        problem: { status: 503, code: "budget_unavailable", message: "Budgets cannot be checked right now, so requests are refused. Retry shortly." },
        headers: { ...(refusal.readings === undefined ? noHeaders : style.rateLimitHeaders(refusal.readings)), ...retryHeaders(1_000) }
      }
    case "ServiceStopping":
      return {
        problem: {
          status: 503,
          code: "service_stopping",
          message: "The service is restarting and this answer was cut at the end of its shutdown grace. Retry the request."
        },
        headers: retryHeaders(1_000)
      }
    case "UsageNotDurable":
      return {
        problem: {
          status: 503,
          code: "usage_recording_unavailable",
          message: "Usage cannot be recorded durably right now, so billable requests are refused. Retry shortly."
        },
        headers: retryHeaders(5_000)
      }
    case "UpstreamRefused":
    case "UpstreamCredentialsRefused":
    case "UpstreamAnswered5xx":
    case "UpstreamUnavailable":
    case "WorkspaceKeyRefused":
    case "WorkspaceKeyUnusable":
      return {
        problem: upstreamProblem(refusal),
        headers: refusal.readings === undefined
          ? refusal.hints
          : { ...style.rateLimitHeaders(refusal.readings), ...refusal.hints }
      }
    default:
      return { problem: namingModelsList(refusal, style.word?.(refusal) ?? requestProblem(refusal)), headers: noHeaders }
  }
}

/** The exports answer in their own format and word nothing of their own; their limit headers are the chat-completions set. */
export const exportsStyle: RefusalStyle = { rateLimitHeaders: xRateLimitHeaders }

/** The limit headers of an admission in a style (none when the limits could not be read). */
export const admissionHeaders = (style: RefusalStyle, readings: LimitReadings | undefined): Readonly<Record<string, string>> =>
  readings === undefined ? noHeaders : style.rateLimitHeaders(readings)
