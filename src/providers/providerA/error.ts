import { Schema } from "effect"
import { problemFields, providerErrorSchema } from "../providerError"
import { ProviderAErrorBody } from "./chatCompletionsWire"
import { providerA } from "./dialect"

/** Error of the chat-completions and embeddings protocol: `{ error: { message, type, param, code } }`. */
export class ProviderAError extends Schema.TaggedError<ProviderAError>()("ProviderAError", problemFields) {}

export const providerAErrorSchema = providerErrorSchema(ProviderAError, ProviderAErrorBody, providerA.errorBody, (body) => ({
  code: body.error.code ?? body.error.type,
  message: body.error.message,
  param: body.error.param ?? undefined
}))
