import { Schema } from "effect"
import { ProviderAErrorBody } from "../schemas/chatCompletions"
import { statusVariants } from "./statusVariants"

/** Error of the chat-completions and embeddings protocol: `{ error: { message, type, param, code } }`. */
export class ProviderAError extends Schema.TaggedError<ProviderAError>()("ProviderAError", {
  status: Schema.Number,
  message: Schema.String,
  type: Schema.String,
  param: Schema.NullOr(Schema.String),
  code: Schema.NullOr(Schema.String)
}) {}

/** The wire body of an error's fields (also written directly, without the class, by the forwarding lane). */
export const providerAErrorWire = (e: Pick<ProviderAError, "message" | "type" | "param" | "code">): ProviderAErrorBody => ({
  error: { message: e.message, type: e.type, param: e.param, code: e.code }
})

export const providerAErrorSchema = statusVariants(
  ProviderAError,
  ProviderAErrorBody,
  providerAErrorWire,
  (body, status) => new ProviderAError({ status, ...body.error })
)
