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

export const providerAErrorSchema = statusVariants(
  ProviderAError,
  ProviderAErrorBody,
  (e) => ({ error: { message: e.message, type: e.type, param: e.param, code: e.code } }),
  (body, status) => new ProviderAError({ status, ...body.error })
)
