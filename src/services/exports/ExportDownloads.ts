import { Clock, Context, Data, Effect, Either, Layer, Option, Redacted } from "effect"
import { type DownloadRefusal, verifyDownload } from "../../domain/signedUrl"
import { type ExportFileContent, ExportStorage, type ExportStorageFailure, type InvalidExportPath } from "./ExportStorage"
import { SigningSecret } from "./SigningSecret"

/** Why a presented download link gets no file: its own refusal, or no file stored under it any more. */
export class DownloadRefused extends Data.TaggedError("DownloadRefused")<{ readonly reason: DownloadRefusal | "gone" }> {}

/** A download link as presented: the file path and the link's query parameters. */
export interface PresentedLink {
  readonly filePath: string
  readonly expires?: string | undefined
  readonly signature?: string | undefined
}

/**
 * The signed download route's service: checks a presented link (signature before expiry) and opens the
 * file it names. The link key comes from the server secret, so every instance accepts every instance's links.
 */
export class ExportDownloads extends Context.Tag("ExportDownloads")<ExportDownloads, {
  readonly open: (link: PresentedLink) => Effect.Effect<ExportFileContent, DownloadRefused | ExportStorageFailure | InvalidExportPath>
}>() {
  static readonly layer = Layer.effect(
    ExportDownloads,
    Effect.gen(function*() {
      const storage = yield* ExportStorage
      const linkKey = Redacted.value((yield* SigningSecret).linkKey)
      return {
        open: (link) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const verdict = verifyDownload(
              linkKey,
              { filePath: link.filePath, expires: link.expires, signature: link.signature },
              Math.floor(now / 1000)
            )
            if (Either.isLeft(verdict)) return yield* Effect.fail(new DownloadRefused({ reason: verdict.left }))
            const content = yield* storage.read(link.filePath)
            return yield* Option.match(content, {
              onNone: () => Effect.fail(new DownloadRefused({ reason: "gone" })),
              onSome: Effect.succeed
            })
          })
      }
    })
  )
}
