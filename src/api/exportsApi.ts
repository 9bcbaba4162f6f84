import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { layoutMarkdown } from "../domain/exportLayouts"
import { exportErrors } from "./errors/exportError"
import { OperationFamily, RequestExample } from "./openapi/annotations"
import { families } from "./openapi/families"
import { UsageExportRequest, UsageExportResult } from "./schemas/usageExport"
import { ExportAuth } from "./security"

export const exportKinds = ["users", "assistants", "workflows", "projects", "models"] as const
export type ExportKind = (typeof exportKinds)[number]

/** What every export endpoint's description says before its CSV layout table. */
const exportRules = (kind: ExportKind): string =>
  [
    "Writes a CSV file of the period [from, to) to export storage and answers with its path, a signed download link " +
      "(valid EXPORT_LINK_TTL_SECONDS) and the number of data rows. `date` is a local wall time in `timezone` (an IANA " +
      "name; a trailing Z is ignored); a wall time skipped by a DST change moves forward by the gap, an ambiguous one " +
      "takes the earlier instant. Local days of the file are cut at midnight of `from.timezone`.",
    "400: bad date point or time zone (`field` names it), `from` not before `to`, or more than 1,000,000 rows " +
      "(EXPORT_MAX_ROWS): narrow the range. 401: missing, invalid or revoked key, or no USAGE_EXPORT_API scope. " +
      "404: no data in the period. 429 `too_many_concurrent_exports`: the workspace's own exports held all its slots " +
      "(EXPORT_CONCURRENCY_PER_WORKSPACE) for EXPORT_QUEUE_TIMEOUT_MS; 503 `exports_busy`: the instance's slots were all " +
      "taken that long; both with `retry-after`.",
    ...(kind === "workflows" ? ["404 `workflows_not_enabled` when workflows are not enabled in the workspace."] : []),
    ...(kind === "users"
      ? [
        "Privacy: with `anonymizeUsers` the user id, email and name are stable pseudonyms (HMAC under the server secret); " +
        "with leaderboards disabled they are empty."
      ]
      : [])
  ].join("\n\n")

/** January 2026 in Berlin: a valid period, `from` before `to`. */
export const exportRequestExample: typeof UsageExportRequest.Encoded = {
  from: { date: "2026-01-01T00:00:00", timezone: "Europe/Berlin" },
  to: { date: "2026-02-01T00:00:00", timezone: "Europe/Berlin" }
}

const exportEndpoint = <const Kind extends ExportKind>(kind: Kind) =>
  HttpApiEndpoint.post(kind, `/export/${kind}`)
    .setPayload(UsageExportRequest)
    .addSuccess(UsageExportResult)
    .annotate(OpenApi.Summary, `Export ${kind} usage as CSV`)
    .annotate(OpenApi.Description, `${exportRules(kind)}\n\n${layoutMarkdown(kind)}`)
    .annotate(RequestExample, exportRequestExample)

/** The five usage exports; a key with USAGE_EXPORT_API. */
export class ExportsApi extends HttpApiGroup.make("exports")
  .add(exportEndpoint("users"))
  .add(exportEndpoint("assistants"))
  .add(exportEndpoint("workflows"))
  .add(exportEndpoint("projects"))
  .add(exportEndpoint("models"))
  // 400 bad period or too many rows, 404 no data, 500 the file not stored, 503 the database down; 413/415 the body.
  .addError(exportErrors(400, 404, 413, 415, 500, 503))
  .middleware(ExportAuth)
  .annotate(OperationFamily, families.usageExports)
{}
