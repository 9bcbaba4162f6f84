import { Schema } from "effect"
import { UsageExportErrorBody } from "../schemas/usageExport"
import { statusVariants } from "./statusVariants"

/** Error of the usage export endpoints: `{ success: false, error: { code, message, field? } }`. */
export class ExportError extends Schema.TaggedError<ExportError>()("ExportError", {
  status: Schema.Number,
  code: Schema.String,
  message: Schema.String,
  field: Schema.optional(Schema.String)
}) {}

export const exportErrorSchema = statusVariants(
  ExportError,
  UsageExportErrorBody,
  (e) => ({ success: false as const, error: { code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) } }),
  (body, status) => new ExportError({ status, ...body.error })
)
