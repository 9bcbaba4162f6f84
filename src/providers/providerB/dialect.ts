import { Redacted } from "effect"
import type { Problem } from "../../domain/problem"
import { providerBErrorType } from "./protocol"
import type { RequestRefusal } from "../../domain/refusals"
import type { ProviderDialect } from "../providerDialect"
import { messagesRateLimitHeaders } from "../rateLimitHeaders"

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

/** Its clients show no param: a problem about a field names it in the message (`messages[1].role: …`). */
const namingField = (p: Problem): string =>
  p.param === undefined || p.message.toLowerCase().includes(p.param.toLowerCase()) ? p.message : `${p.param}: ${p.message}`

/** `{ type: "error", error: { type, message } }`, its type following the status. */
const errorBody = (p: Problem) => ({ type: "error" as const, error: { type: providerBErrorType(p.status), message: namingField(p) } })

/** provider_b: messages, in the messages wire format; its clients may send the key as x-api-key. */
export const providerB = {
  id: "provider_b",
  regions: ["eu", "us"],
  keyHeaders: { xApiKey: true },
  errorBody,
  rateLimitHeaders: messagesRateLimitHeaders,
  upstreamAuth: (key) => ({ "x-api-key": Redacted.value(key) }),
  keyCheck: { path: "/v1/models", headers: (settings) => ({ "anthropic-version": settings.upstreamMessagesVersion }) },
  word
} as const satisfies ProviderDialect<"provider_b">
