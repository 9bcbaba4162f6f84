import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Either, Option, Redacted } from "effect"
import { WorkspaceApi } from "../api/Api"
import { ExportError } from "../api/errors/exportError"
import { type DownloadRefusal, verifyDownload } from "../domain/signedUrl"
import { ExportStorage } from "../services/ExportStorage/index"
import { SigningSecret } from "../services/SigningSecret"

const refused = (reason: DownloadRefusal): ExportError => {
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
  }
}

const gone = new ExportError({ status: 404, code: "not_found", message: "The export file no longer exists." })
const unreadable = new ExportError({ status: 500, code: "storage_error", message: "The export file cannot be read. Retry shortly." })

export const DownloadsHandlers = HttpApiBuilder.group(WorkspaceApi, "downloads", (handlers) =>
  Effect.gen(function*() {
    const storage = yield* ExportStorage
    const linkKey = Redacted.value((yield* SigningSecret).linkKey)
    return handlers.handle("download", ({ path, urlParams }) =>
      Effect.gen(function*() {
        const filePath = `${path.folder}/${path.workspaceId}/${path.file}`
        const now = yield* Clock.currentTimeMillis
        const verdict = verifyDownload(
          linkKey,
          { filePath, expires: urlParams.expires, signature: urlParams.signature },
          Math.floor(now / 1000)
        )
        if (Either.isLeft(verdict)) return yield* Effect.fail(refused(verdict.left))
        const content = yield* storage.read(filePath).pipe(Effect.mapError(() => unreadable))
        if (Option.isNone(content)) return yield* Effect.fail(gone)
        const name = path.file
        return HttpServerResponse.stream(content.value.stream, {
          contentType: "text/csv; charset=utf-8",
          contentLength: content.value.bytes,
          headers: {
            "content-disposition": `attachment; filename="${name}"`,
            "cache-control": "private, no-store"
          }
        })
      }))
  }))
