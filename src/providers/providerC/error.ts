import { Schema } from "effect"
import { problemFields, providerErrorSchemas } from "../providerError"
import { providerC } from "./dialect"
import { ProviderCErrorBody } from "./fimWire"

/**
 * Error of the FIM protocol: `{ object: "error", message, type, param, code }`. Its client library
 * puts the raw body into the error message, so the message stays at the top level.
 */
export class ProviderCError extends Schema.TaggedError<ProviderCError>()("ProviderCError", problemFields) {}

const schemas = providerErrorSchemas(ProviderCError, ProviderCErrorBody, providerC.errorBody, (body) => ({
  code: body.code ?? body.type,
  message: body.message,
  param: body.param ?? undefined
}))

/** Every status this format is rendered with: upstream refusals pass through with their own. */
export const providerCErrorSchema = schemas.all

/** This format's errors at the given statuses, as an operation declares what it answers. */
export const providerCErrors = schemas.at
