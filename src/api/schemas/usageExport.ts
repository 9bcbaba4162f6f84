/**
 * Usage export endpoints (`POST /export/{users,assistants,workflows,projects,models}`): request,
 * result and error body as the spec shows them.
 *
 * Here a date point is only checked for being two non-empty strings; parsing the date-time and the
 * time zone is the domain's job (it needs the rules of the spec's date point).
 */
import { Schema } from "effect"
import { nonEmptyString } from "../../domain/fieldSchemas"
import { strictParse } from "../../domain/workspaceSettings"

export const UsageExportDataType = Schema.Literal("assistants", "users", "workflows", "projects", "models")
export type UsageExportDataType = typeof UsageExportDataType.Type

const datePoint = (field: "from" | "to") =>
  Schema.Struct({
    /** ISO 8601 date-time, taken as local time in `timezone` (a trailing Z is ignored). */
    date: nonEmptyString(`${field}.date`),
    /** Time zone identifier, e.g. UTC or Europe/Berlin. */
    timezone: nonEmptyString(`${field}.timezone`)
  })

export const UsageExportRequest = Schema.Struct({
  from: datePoint("from"),
  to: datePoint("to")
}).annotations({ identifier: "UsageExportRequest" })
export type UsageExportRequest = typeof UsageExportRequest.Type
/** The same request as the admin API and the console take it: an unknown field is refused (strictParse). */
export const StrictUsageExportRequest = UsageExportRequest.annotations(strictParse)
export type DatePointRequest = UsageExportRequest["from"]

export const UsageExportResult = Schema.Struct({
  success: Schema.Literal(true),
  data: Schema.Struct({
    /** `<kind>-usage/<workspace_id>/<kind>-usage-<from_date>-<to_date>-<suffix>.csv` */
    filePath: Schema.String,
    /** Signed, expiring download link. */
    downloadUrl: Schema.String,
    dataType: UsageExportDataType,
    recordCount: Schema.Int.pipe(Schema.nonNegative()),
    /** ISO 8601 date-times carrying the offset of the requested time zone. */
    dateRange: Schema.Struct({
      from: Schema.String,
      to: Schema.String
    })
  })
}).annotations({ identifier: "UsageExportResult" })
export type UsageExportResult = typeof UsageExportResult.Type

/** `{ success: false, error: { code, message, field? } }`; `field` names the offending request field. */
export const UsageExportErrorBody = Schema.Struct({
  success: Schema.Literal(false),
  error: Schema.Struct({
    code: Schema.String,
    message: Schema.String,
    field: Schema.optionalWith(Schema.String, { exact: true })
  })
}).annotations({ identifier: "UsageExportErrorBody" })
export type UsageExportErrorBody = typeof UsageExportErrorBody.Type
