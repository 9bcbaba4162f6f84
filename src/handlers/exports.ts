import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { WorkspaceApi } from "../api/Api"
import { ExportError } from "../api/errors/exportError"
import type { ExportKind } from "../api/exportsApi"
import type { UsageExportRequest } from "../api/schemas/usageExport"
import { CurrentPrincipal } from "../api/security"
import { type ExportFailure, ExportService } from "../services/exports/ExportService/index"
import { retryAfterQueueTimeout } from "./exportAdmission"

/** Export failures in the spec's error format. */
export const asExportError = (failure: ExportFailure): ExportError => {
  switch (failure._tag) {
    case "InvalidDatePoint":
      return new ExportError({ status: 400, code: "invalid_date_range", message: failure.message, field: failure.field })
    case "ExportTooLarge":
      return new ExportError({
        status: 400,
        code: "export_too_large",
        message: `The export would have more than ${failure.limit} rows, the limit. ` +
          "Narrow the date range or split the export into smaller ranges."
      })
    case "ExportQueueTimeout":
      return failure.heldBy === "workspace"
        ? new ExportError({
          status: 429,
          code: "too_many_concurrent_exports",
          message: `This workspace already runs ${failure.limit} exports at once, the most it may, and none finished ` +
            `within ${Math.round(failure.waitedMs / 1000)} s. Retry once one of them has finished.`
        })
        : new ExportError({
          status: 503,
          code: "exports_busy",
          message: `The service is running ${failure.limit} exports, the most it runs at once, and none finished ` +
            `within ${Math.round(failure.waitedMs / 1000)} s. Retry shortly.`
        })
    case "ExportNoData":
      return failure.reason === "workflows_disabled"
        ? new ExportError({
          status: 404,
          code: "workflows_not_enabled",
          message: "Workflows are not enabled in this workspace, so there is no workflow data to export."
        })
        : new ExportError({
          status: 404,
          code: "no_data",
          message: `No ${failure.kind} usage data found for the period. Check the period; there may have been no activity.`
        })
    case "ExportStorageFailure":
    case "InvalidExportPath":
      return new ExportError({ status: 500, code: "storage_error", message: "The export file could not be stored. Retry shortly." })
    case "StorageFailure":
      return new ExportError({ status: 503, code: "unavailable", message: "The database is unavailable. Retry shortly." })
  }
}

const exportOf = (exports: ExportService["Type"], kind: ExportKind) => ({ payload }: { readonly payload: UsageExportRequest }) =>
  Effect.gen(function*() {
    const { keyId, workspace } = yield* CurrentPrincipal
    const data = yield* exports.run({ kind, workspace, from: payload.from, to: payload.to, createdBy: { keyId } }).pipe(
      retryAfterQueueTimeout,
      Effect.tapErrorTag("ExportStorageFailure", (error) => Effect.logError("export storage failed", error.cause)),
      Effect.tapErrorTag("StorageFailure", (error) => Effect.logError("export query failed", error.cause)),
      Effect.mapError(asExportError)
    )
    return { success: true as const, data }
  })

export const ExportsHandlers = HttpApiBuilder.group(WorkspaceApi, "exports", (handlers) =>
  Effect.map(ExportService, (exports) =>
    handlers
      .handle("users", exportOf(exports, "users"))
      .handle("assistants", exportOf(exports, "assistants"))
      .handle("workflows", exportOf(exports, "workflows"))
      .handle("projects", exportOf(exports, "projects"))
      .handle("models", exportOf(exports, "models"))))
