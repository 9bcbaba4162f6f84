import { Schema } from "effect"
import { ProviderBErrorBody } from "../schemas/messages"
import { statusVariants } from "./statusVariants"

/** Error of the messages protocol: `{ type: "error", error: { type, message } }`. */
export class ProviderBError extends Schema.TaggedError<ProviderBError>()("ProviderBError", {
  status: Schema.Number,
  type: Schema.String,
  message: Schema.String
}) {}

/** The protocol's error type for each status, as its client library expects (one mapping, in domain/). */
export { providerBErrorType } from "../../domain/protocols/providerB"

/** The wire body of an error's fields (also written directly, without the class, by the forwarding lane). */
export const providerBErrorWire = (e: Pick<ProviderBError, "type" | "message">): ProviderBErrorBody => ({
  type: "error",
  error: { type: e.type, message: e.message }
})

export const providerBErrorSchema = statusVariants(
  ProviderBError,
  ProviderBErrorBody,
  providerBErrorWire,
  (body, status) => new ProviderBError({ status, ...body.error })
)
