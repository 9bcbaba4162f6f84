import { NodeStream } from "@effect/platform-node"
import { Clock, Effect, Exit, Layer, Option, Redacted, Stream } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { AppConfig } from "../../config"
import { downloadUrl, isExportFilePath, signDownload } from "../../domain/signedUrl"
import { SigningSecret } from "../SigningSecret"
import { ExportStorage, ExportStorageError, InvalidExportPath } from "./index"

/** Pieces are gathered up to this size before a write: fewer system calls, same memory bound. */
const WRITE_BATCH_CHARS = 256 * 1024

/**
 * Export files under DATA_DIR/exports/<filePath>. A file is written to DATA_DIR/exports/.partial/
 * and renamed into place once complete and flushed, so the final path never holds half a file.
 * Links point at this service's `GET /downloads/<filePath>`, signed with the server secret.
 */
export const makeLocalExportStorage = (options: {
  readonly root: string
  /** PUBLIC_URL followed by BASE_PATH. */
  readonly linkBase: string
  readonly linkTtlSeconds: number
  readonly linkKey: Uint8Array
}) => {
  const partialDir = path.join(options.root, ".partial")

  const checked = (filePath: string) =>
    isExportFilePath(filePath)
      ? Effect.succeed(path.join(options.root, filePath))
      : Effect.fail(new InvalidExportPath({ filePath }))

  const fsCall = <A>(operation: "write" | "read", filePath: string, run: () => Promise<A>) =>
    Effect.tryPromise({ try: run, catch: (cause) => new ExportStorageError({ operation, filePath, cause }) })

  const writeAll = <E, R>(handle: fs.promises.FileHandle, filePath: string, content: Stream.Stream<string, E, R>) =>
    Effect.gen(function*() {
      let pending = ""
      let bytes = 0
      const flush = Effect.suspend(() => {
        const text = pending
        pending = ""
        return text.length === 0
          ? Effect.void
          : Effect.map(fsCall("write", filePath, () => handle.write(text)), ({ bytesWritten }) => void (bytes += bytesWritten))
      })
      yield* Stream.runForEach(content, (piece) => {
        pending += piece
        return pending.length >= WRITE_BATCH_CHARS ? flush : Effect.void
      })
      yield* flush
      yield* fsCall("write", filePath, () => handle.sync())
      return bytes
    })

  return ExportStorage.of({
    backend: "local",
    write: (filePath, content) =>
      Effect.gen(function*() {
        const target = yield* checked(filePath)
        const partial = path.join(partialDir, `${randomUUID()}.part`)
        yield* fsCall("write", filePath, async () => {
          await fs.promises.mkdir(partialDir, { recursive: true })
          await fs.promises.mkdir(path.dirname(target), { recursive: true })
        })
        const bytes = yield* Effect.acquireUseRelease(
          fsCall("write", filePath, () => fs.promises.open(partial, "wx", 0o640)),
          (handle) => writeAll(handle, filePath, content),
          (handle, exit) =>
            Effect.promise(async () => {
              await handle.close().catch(() => undefined)
              // Failed or interrupted: the partial file goes; the final path was never touched.
              if (Exit.isFailure(exit)) await fs.promises.rm(partial, { force: true })
            })
        )
        yield* fsCall("write", filePath, () => fs.promises.rename(partial, target)).pipe(
          Effect.tapError(() => Effect.promise(() => fs.promises.rm(partial, { force: true })))
        )
        return { filePath, bytes }
      }),
    downloadUrl: (filePath) =>
      Effect.gen(function*() {
        yield* checked(filePath)
        const now = yield* Clock.currentTimeMillis
        const expires = Math.floor(now / 1000) + options.linkTtlSeconds
        return downloadUrl(options.linkBase, signDownload(options.linkKey, filePath, expires))
      }),
    read: (filePath) =>
      Effect.gen(function*() {
        const target = yield* checked(filePath)
        const stat = yield* Effect.tryPromise(() => fs.promises.stat(target)).pipe(Effect.option)
        if (Option.isNone(stat) || !stat.value.isFile()) return Option.none()
        const stream = NodeStream.fromReadable<ExportStorageError>(
          () => fs.createReadStream(target, { highWaterMark: 256 * 1024 }),
          (cause) => new ExportStorageError({ operation: "read", filePath, cause })
        )
        return Option.some({ bytes: stat.value.size, stream })
      })
  })
}

/** Local storage as configured: DATA_DIR/exports, links from PUBLIC_URL + BASE_PATH. */
export const layer = Layer.effect(
  ExportStorage,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const secret = yield* SigningSecret
    return makeLocalExportStorage({
      root: path.join(config.dataDir, "exports"),
      linkBase: `${config.publicUrl}${config.basePath}`,
      linkTtlSeconds: config.exportLinkTtlSeconds,
      linkKey: Redacted.value(secret.linkKey)
    })
  })
)
