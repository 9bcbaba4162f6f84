import { Schema } from "effect"
import { problemFields, providerErrorSchemas } from "../providerError"
import { ProviderAErrorBody } from "./chatCompletionsWire"
import { providerA } from "./dialect"

/** Error of the chat-completions and embeddings protocol: `{ error: { message, type, param, code } }`. */
export class ProviderAError extends Schema.TaggedError<ProviderAError>()("ProviderAError", problemFields) {}

const schemas = providerErrorSchemas(ProviderAError, ProviderAErrorBody, providerA.errorBody, (body) => ({
  code: body.error.code ?? body.error.type,
  message: body.error.message,
  param: body.error.param ?? undefined
}))

/** Every status this format is rendered with: upstream refusals pass through with their own. */
export const providerAErrorSchema = schemas.all

/** This format's errors at the given statuses, as an operation declares what it answers. */
export const providerAErrors = schemas.at
