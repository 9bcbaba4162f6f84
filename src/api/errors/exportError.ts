import { Schema } from "effect"
import { UsageExportErrorBody } from "../schemas/usageExport"
import { errorStatuses, statusVariants } from "../../providers/statusVariants"

/** Error of the usage export endpoints: `{ success: false, error: { code, message, field? } }`. */
export class ExportError extends Schema.TaggedError<ExportError>()("ExportError", {
  status: Schema.Number,
  code: Schema.String,
  message: Schema.String,
  field: Schema.optional(Schema.String)
}) {}

/** The wire body of an error's fields (also written directly, without the class). */
export const exportErrorWire = (e: Pick<ExportError, "code" | "message" | "field">): UsageExportErrorBody => ({
  success: false,
  error: { code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) }
})

/** The export format's errors at the given statuses, as an operation declares what it answers. */
export const exportErrors = statusVariants(
  ExportError,
  UsageExportErrorBody,
  exportErrorWire,
  (body, status) => new ExportError({ status, ...body.error })
)

/** Every status the export format is rendered with (paths under /export/ and /downloads/ answer in it). */
export const exportErrorSchema = exportErrors(...errorStatuses)
