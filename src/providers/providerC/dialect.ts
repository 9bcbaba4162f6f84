import { Redacted } from "effect"
import type { Problem } from "../../domain/problem"
import { providerCErrorBody } from "./protocol"
import type { RequestRefusal } from "../../domain/refusals"
import type { ProviderDialect } from "../providerDialect"
import { xRateLimitHeaders } from "../rateLimitHeaders"

/** provider_c's words for the refusals its clients know. */
const word = (refusal: RequestRefusal): Problem | undefined => {
  switch (refusal._tag) {
    case "RegionNotServed":
      return {
        status: 404,
        code: "region_not_found",
        message: `Region '${refusal.region}' does not exist. FIM completion is served in eu only.`,
        param: "region"
      }
    case "ModelNotSupported":
      return {
        status: 400,
        code: "invalid_model",
        message: `Invalid model: ${refusal.model}. FIM completion supports ${refusal.supported} only.`,
        param: "model"
      }
    default:
      return undefined
  }
}

/** provider_c: fill-in-the-middle code completion; its errors and limits use the chat-completions names. */
export const providerC = {
  id: "provider_c",
  regions: ["eu"],
  keyHeaders: { xApiKey: false },
  errorBody: providerCErrorBody,
  rateLimitHeaders: xRateLimitHeaders,
  upstreamAuth: (key) => ({ authorization: `Bearer ${Redacted.value(key)}` }),
  keyCheck: { path: "/v1/models", headers: () => ({}) },
  word
} as const satisfies ProviderDialect<"provider_c">
