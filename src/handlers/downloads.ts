import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { WorkspaceApi } from "../api/Api"
import { ExportError } from "../api/errors/exportError"
import { type DownloadRefused, ExportDownloads } from "../services/exports/ExportDownloads"

const refused = ({ reason }: DownloadRefused): ExportError => {
  switch (reason) {
    case "bad_path":
      return new ExportError({ status: 404, code: "not_found", message: "No export file at this path." })
    case "bad_signature":
      return new ExportError({ status: 403, code: "invalid_signature", message: "The download link is not valid." })
    case "expired":
      return new ExportError({
        status: 403,
        code: "link_expired",
        message: "The download link has expired. Run the export again for a new link."
      })
    case "gone":
      return new ExportError({ status: 404, code: "not_found", message: "The export file no longer exists." })
  }
}

const unreadable = new ExportError({ status: 500, code: "storage_error", message: "The export file cannot be read. Retry shortly." })

export const DownloadsHandlers = HttpApiBuilder.group(WorkspaceApi, "downloads", (handlers) =>
  Effect.map(ExportDownloads, (downloads) =>
    handlers.handle("download", ({ path, urlParams }) =>
      downloads.open({ filePath: `${path.folder}/${path.workspaceId}/${path.file}`, ...urlParams }).pipe(
        Effect.mapError((failure) => failure._tag === "DownloadRefused" ? refused(failure) : unreadable),
        Effect.map((content) =>
          HttpServerResponse.stream(content.stream, {
            contentType: "text/csv; charset=utf-8",
            contentLength: content.bytes,
            headers: {
              "content-disposition": `attachment; filename="${path.file}"`,
              "cache-control": "private, no-store"
            }
          })
        )
      ))))
