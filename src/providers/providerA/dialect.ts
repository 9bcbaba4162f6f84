import { Redacted } from "effect"
import type { Problem } from "../../domain/problem"
import { providerAErrorBody } from "./protocol"
import type { RequestRefusal } from "../../domain/refusals"
import type { ProviderDialect } from "../providerDialect"
import { xRateLimitHeaders } from "../rateLimitHeaders"

/** provider_a's words for the refusals its clients know. */
const word = (refusal: RequestRefusal): Problem | undefined => {
  switch (refusal._tag) {
    case "RegionNotServed":
      return { status: 404, code: "region_not_found", message: `Region '${refusal.region}' does not exist. Use eu or us.`, param: "region" }
    case "ModelNotSupported":
      return {
        status: 404,
        code: "model_not_found",
        message: `The model '${refusal.model}' is not supported for embeddings: use ${refusal.supported}.`,
        param: "model"
      }
    case "FieldNotSupported":
      return {
        status: 400,
        code: "invalid_value",
        message: `${refusal.model} does not support '${refusal.field}'; only text-embedding-3 and later models do.`,
        param: refusal.field
      }
    case "OutputLimitExceeded":
      return {
        status: 400,
        code: "invalid_value",
        message:
          `${refusal.field} is too large: ${refusal.requested}. This model supports at most ${refusal.limit} completion tokens, whereas you provided ${refusal.requested}.`,
        param: refusal.field
      }
    default:
      return undefined
  }
}

/** provider_a: chat completions and embeddings, in the chat-completions wire format. */
export const providerA = {
  id: "provider_a",
  regions: ["eu", "us"],
  keyHeaders: { xApiKey: false },
  errorBody: providerAErrorBody,
  rateLimitHeaders: xRateLimitHeaders,
  upstreamAuth: (key) => ({ authorization: `Bearer ${Redacted.value(key)}` }),
  keyCheck: { path: "/v1/models", headers: () => ({}) },
  word
} as const satisfies ProviderDialect<"provider_a">
