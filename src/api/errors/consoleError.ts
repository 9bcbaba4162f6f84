import { Schema } from "effect"
import { statusVariants } from "../../providers/statusVariants"

/** Error of the console API: `{ error: { code, message, field? } }`, the admin API's body. */
export class ConsoleError extends Schema.TaggedError<ConsoleError>()("ConsoleError", {
  status: Schema.Number,
  code: Schema.String,
  message: Schema.String,
  field: Schema.optional(Schema.String)
}) {}

export const ConsoleErrorBody = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, field: Schema.optional(Schema.String) })
}).annotations({ identifier: "ConsoleErrorBody" })

export const consoleErrorWire = (e: Pick<ConsoleError, "code" | "message" | "field">): typeof ConsoleErrorBody.Type => ({
  error: { code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) }
})

/** The console API's errors at the given statuses, as an operation declares what it answers. */
export const consoleErrors = statusVariants(
  ConsoleError,
  ConsoleErrorBody,
  consoleErrorWire,
  (body, status) => new ConsoleError({ status, ...body.error })
)

/** Every status the console format is rendered with. */
export const consoleErrorSchema = consoleErrors(400, 401, 403, 404, 409, 410, 413, 415, 429, 500, 502, 503)

export const unauthenticated = () =>
  new ConsoleError({ status: 401, code: "unauthenticated", message: "Sign in first: no valid session." })
export const forbidden = (message = "Your role in this workspace does not allow this.") =>
  new ConsoleError({ status: 403, code: "forbidden", message })
export const unavailable = () =>
  new ConsoleError({ status: 503, code: "unavailable", message: "The database is unavailable. Retry shortly." })
