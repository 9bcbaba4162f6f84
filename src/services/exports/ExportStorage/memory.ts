import { Chunk, Effect, Option, Ref, Stream } from "effect"
import { isExportFilePath } from "../../../domain/signedUrl"
import { type ExportStorageShape, InvalidExportPath } from "./contract"

/**
 * For tests: files kept in a Ref, links of the form `memory://<filePath>`. Like the real backends, a
 * file appears only once its content has been written completely.
 */
export const makeMemoryExportStorage = Effect.map(Ref.make(new Map<string, string>()), (files): ExportStorageShape => ({
    backend: "memory",
    write: (filePath, content) =>
      isExportFilePath(filePath)
        ? Effect.gen(function*() {
          const pieces = yield* Stream.runCollect(content)
          const text = Chunk.join(pieces, "")
          yield* Ref.update(files, (map) => new Map(map).set(filePath, text))
          return { filePath, bytes: Buffer.byteLength(text) }
        })
        : Effect.fail(new InvalidExportPath({ filePath })),
    downloadUrl: (filePath) =>
      isExportFilePath(filePath)
        ? Effect.succeed(`memory://${filePath}`)
        : Effect.fail(new InvalidExportPath({ filePath })),
    read: (filePath) =>
      Effect.map(Ref.get(files), (map) =>
        Option.map(Option.fromNullable(map.get(filePath)), (text) => {
          const bytes = Buffer.from(text)
          return { bytes: bytes.length, stream: Stream.succeed(new Uint8Array(bytes)) }
        }))
  }))
