import { Schema } from "effect"
import { statusVariants } from "../../providers/statusVariants"

/** Error of the admin API: `{ error: { code, message, field? } }`. */
export class AdminError extends Schema.TaggedError<AdminError>()("AdminError", {
  status: Schema.Number,
  code: Schema.String,
  message: Schema.String,
  field: Schema.optional(Schema.String)
}) {}

export const AdminErrorBody = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, field: Schema.optional(Schema.String) })
}).annotations({ identifier: "AdminErrorBody" })

/** The wire body of an error's fields (also written directly, without the class). */
export const adminErrorWire = (e: Pick<AdminError, "code" | "message" | "field">): typeof AdminErrorBody.Type => ({
  error: { code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) }
})

/** The admin API's errors at the given statuses, as an operation declares what it answers. */
export const adminErrors = statusVariants(
  AdminError,
  AdminErrorBody,
  adminErrorWire,
  (body, status) => new AdminError({ status, ...body.error })
)

/**
 * Every status the admin format is rendered with. Unknown paths answer in it too (a route that does
 * not exist, a body refused before routing), so this stays the whole list, beyond what the operations declare.
 */
export const adminErrorSchema = adminErrors(400, 401, 404, 409, 413, 415, 429, 500, 502, 503)
