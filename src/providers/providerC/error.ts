import { Schema } from "effect"
import { problemFields, providerErrorSchema } from "../providerError"
import { providerC } from "./dialect"
import { ProviderCErrorBody } from "./fimWire"

/**
 * Error of the FIM protocol: `{ object: "error", message, type, param, code }`. Its client library
 * puts the raw body into the error message, so the message stays at the top level.
 */
export class ProviderCError extends Schema.TaggedError<ProviderCError>()("ProviderCError", problemFields) {}

export const providerCErrorSchema = providerErrorSchema(ProviderCError, ProviderCErrorBody, providerC.errorBody, (body) => ({
  code: body.code ?? body.type,
  message: body.message,
  param: body.param ?? undefined
}))
