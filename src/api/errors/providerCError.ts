import { Schema } from "effect"
import { ProviderCErrorBody } from "../schemas/fim"
import { statusVariants } from "./statusVariants"

/**
 * Error of the FIM protocol: `{ object: "error", message, type, param, code }`. Its client library
 * puts the raw body into the error message, so the message stays at the top level.
 */
export class ProviderCError extends Schema.TaggedError<ProviderCError>()("ProviderCError", {
  status: Schema.Number,
  message: Schema.String,
  type: Schema.String,
  param: Schema.NullOr(Schema.String),
  code: Schema.NullOr(Schema.String)
}) {}

/** The wire body of an error's fields (also written directly, without the class, by the forwarding lane). */
export const providerCErrorWire = (e: Pick<ProviderCError, "message" | "type" | "param" | "code">): ProviderCErrorBody => ({
  object: "error",
  message: e.message,
  type: e.type,
  param: e.param,
  code: e.code
})

export const providerCErrorSchema = statusVariants(
  ProviderCError,
  ProviderCErrorBody,
  providerCErrorWire,
  (body, status) => new ProviderCError({ status, message: body.message, type: body.type, param: body.param, code: body.code })
)
