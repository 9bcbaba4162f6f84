import { Redacted } from "effect"
import type { Problem } from "../../domain/problem"
import { providerBErrorBody, providerBErrorType } from "../../domain/protocols/providerB"
import type { RequestRefusal } from "../../domain/refusals"
import type { ProviderDialect } from "../provider"
import { anthropicRateLimitHeaders } from "../rateLimitHeaders"

/** provider_b's words for the refusals its clients know. */
const word = (refusal: RequestRefusal): Problem | undefined => {
  switch (refusal._tag) {
    case "RegionNotServed":
      return { status: 404, code: "region_not_found", message: `Region '${refusal.region}' does not exist. Use eu or us.`, param: "region" }
    case "ModelNotFound":
      return {
        status: 404,
        code: "model_not_found",
        message: `model: ${refusal.model} does not exist or you do not have access to it.`,
        param: "model"
      }
    case "OutputLimitExceeded":
      return {
        status: 400,
        code: "invalid_value",
        message:
          `${refusal.field}: ${refusal.requested} > ${refusal.limit}, which is the maximum allowed number of output tokens for ${refusal.model}.`,
        param: refusal.field
      }
    default:
      return undefined
  }
}

/** provider_b: messages, in the messages wire format; its clients may send the key as x-api-key. */
export const providerB = {
  id: "provider_b",
  regions: ["eu", "us"],
  keyHeaders: { xApiKey: true },
  errorType: providerBErrorType,
  errorBody: providerBErrorBody,
  rateLimitHeaders: anthropicRateLimitHeaders,
  upstreamAuth: (key) => ({ "x-api-key": Redacted.value(key) }),
  word
} as const satisfies ProviderDialect<"provider_b">
