import { Schema } from "effect"
import { problemFields, providerErrorSchemas } from "../providerError"
import { providerB } from "./dialect"
import { ProviderBErrorBody } from "./messagesWire"

/** Error of the messages protocol: `{ type: "error", error: { type, message } }`. */
export class ProviderBError extends Schema.TaggedError<ProviderBError>()("ProviderBError", problemFields) {}

const schemas = providerErrorSchemas(ProviderBError, ProviderBErrorBody, providerB.errorBody, (body) => ({
  code: body.error.type,
  message: body.error.message
}))

/** Every status this format is rendered with: upstream refusals pass through with their own. */
export const providerBErrorSchema = schemas.all

/** This format's errors at the given statuses, as an operation declares what it answers. */
export const providerBErrors = schemas.at
