import { Schema } from "effect"
import { problemFields, providerErrorSchema } from "../providerError"
import { providerB } from "./dialect"
import { ProviderBErrorBody } from "./messagesWire"

/** Error of the messages protocol: `{ type: "error", error: { type, message } }`. */
export class ProviderBError extends Schema.TaggedError<ProviderBError>()("ProviderBError", problemFields) {}

export const providerBErrorSchema = providerErrorSchema(ProviderBError, ProviderBErrorBody, providerB.errorBody, (body) => ({
  code: body.error.type,
  message: body.error.message
}))
