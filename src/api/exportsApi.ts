import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { exportErrorSchema } from "./errors/exportError"
import { UsageExportRequest, UsageExportResult } from "./schemas/usageExport"
import { ExportAuth } from "./security"

export const exportKinds = ["users", "assistants", "workflows", "projects", "models"] as const
export type ExportKind = (typeof exportKinds)[number]

const exportEndpoint = <const Kind extends ExportKind>(kind: Kind) =>
  HttpApiEndpoint.post(kind, `/export/${kind}`)
    .setPayload(UsageExportRequest)
    .addSuccess(UsageExportResult)
    .annotate(OpenApi.Summary, `Export ${kind} usage as CSV`)

/** The five usage exports; a key with USAGE_EXPORT_API. */
export class ExportsApi extends HttpApiGroup.make("exports")
  .add(exportEndpoint("users"))
  .add(exportEndpoint("assistants"))
  .add(exportEndpoint("workflows"))
  .add(exportEndpoint("projects"))
  .add(exportEndpoint("models"))
  .addError(exportErrorSchema)
  .middleware(ExportAuth)
{}
