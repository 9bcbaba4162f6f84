import { NodeStream } from "@effect/platform-node"
import { Clock, Duration, Effect, Exit, Option, Redacted, Schedule, Stream } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { AppConfig } from "../../../config"
import { downloadUrl, isExportFilePath, signDownload } from "../../../domain/signedUrl"
import { SigningSecret } from "../SigningSecret"
import { ExportStorageFailure, type ExportStorageShape, InvalidExportPath } from "./contract"

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
}): ExportStorageShape => {
  const partialDir = path.join(options.root, ".partial")

  const checked = (filePath: string) =>
    isExportFilePath(filePath)
      ? Effect.succeed(path.join(options.root, filePath))
      : Effect.fail(new InvalidExportPath({ filePath }))

  const fsCall = <A>(operation: "write" | "read", filePath: string, run: () => Promise<A>) =>
    Effect.tryPromise({ try: run, catch: (cause) => new ExportStorageFailure({ operation, filePath, cause }) })

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

  return {
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
    downloadUrl: (filePath, expiresAt) =>
      Effect.gen(function*() {
        yield* checked(filePath)
        const now = yield* Clock.currentTimeMillis
        const expires = expiresAt === undefined ? Math.floor(now / 1000) + options.linkTtlSeconds : Math.floor(expiresAt.getTime() / 1000)
        return downloadUrl(options.linkBase, signDownload(options.linkKey, filePath, expires))
      }),
    read: (filePath) =>
      Effect.gen(function*() {
        const target = yield* checked(filePath)
        const stat = yield* Effect.tryPromise(() => fs.promises.stat(target)).pipe(Effect.option)
        if (Option.isNone(stat) || !stat.value.isFile()) return Option.none()
        const stream = NodeStream.fromReadable<ExportStorageFailure>(
          () => fs.createReadStream(target, { highWaterMark: 256 * 1024 }),
          (cause) => new ExportStorageFailure({ operation: "read", filePath, cause })
        )
        return Option.some({ bytes: stat.value.size, stream })
      })
  }
}

/** A partial file this old belongs to no running export (they take seconds): a crash left it. */
const abandonedPartialMs = 6 * 60 * 60 * 1000

/**
 * Removes the export files whose links have all expired (a file is linked only when written, so
 * once its age passes the link lifetime nobody can download it) and partial files left by a crash.
 * Returns how many files went.
 */
export const sweepExpiredExports = (root: string, linkTtlSeconds: number, now: number): Effect.Effect<number> =>
  Effect.promise(async () => {
    const entries = await fs.promises.readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])
    let removed = 0
    for (const entry of entries) {
      if (!entry.isFile()) continue
      const file = path.join(entry.parentPath, entry.name)
      const inPartialDir = path.dirname(file) === path.join(root, ".partial")
      const exportFile = isExportFilePath(path.relative(root, file).split(path.sep).join("/"))
      if (!inPartialDir && !exportFile) continue
      const stat = await fs.promises.stat(file).catch(() => undefined)
      const maxAgeMs = inPartialDir ? abandonedPartialMs : linkTtlSeconds * 1000
      if (stat === undefined || now - stat.mtimeMs <= maxAgeMs) continue
      await fs.promises.rm(file, { force: true })
      removed += 1
    }
    return removed
  })

const sweepEvery = Duration.minutes(10)

/**
 * Local storage as configured: DATA_DIR/exports, links from PUBLIC_URL + BASE_PATH. Expired files
 * are swept at start and every ten minutes, so the folder does not grow without end.
 */
export const localFromConfig = Effect.gen(function*() {
  const config = yield* AppConfig
  const secret = yield* SigningSecret
  const root = path.join(config.dataDir, "exports")
  const sweep = Effect.flatMap(Clock.currentTimeMillis, (now) => sweepExpiredExports(root, config.exportLinkTtlSeconds, now)).pipe(
    Effect.tap((removed) =>
      removed === 0 ? Effect.void : Effect.logInfo("expired export files removed").pipe(Effect.annotateLogs({ removed, root }))
    )
  )
  yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(sweepEvery)))
  return makeLocalExportStorage({
    root,
    linkBase: `${config.publicUrl}${config.basePath}`,
    linkTtlSeconds: config.exportLinkTtlSeconds,
    linkKey: Redacted.value(secret.linkKey)
  })
})
