import { expect, type Vitest } from "@effect/vitest"
import { Chunk, Effect, Either, Option, Stream } from "effect"
import * as crypto from "node:crypto"
import { ExportStorage } from "../../src/services/exports/ExportStorage/index"

/** A valid export file path of its own for each case: the backings keep files between cases. */
const freshPath = () =>
  `users-usage/6f1c2b3a-0000-4000-8000-000000000001/users-usage-20260105-20260112-v1-${crypto.randomBytes(4).toString("hex")}.csv`

export const readAll = (storage: ExportStorage["Type"], file: string) =>
  Effect.flatMap(storage.read(file), (found) =>
    Option.match(found, {
      onNone: () => Effect.succeed(undefined),
      onSome: (content) => Effect.map(Stream.runCollect(content.stream), (chunks) => Buffer.concat(Chunk.toArray(chunks)).toString())
    }))

/**
 * A file's content as a client gets it: through `read` where the service serves downloads itself, else
 * (S3: presigned links straight to the store) by following its link. Undefined when there is no such file.
 */
const contentOf = (storage: ExportStorage["Type"], file: string) =>
  Effect.flatMap(readAll(storage, file), (served) =>
    served !== undefined || storage.backend !== "s3"
      ? Effect.succeed(served)
      : Effect.flatMap(storage.downloadUrl(file), (link) =>
        Effect.promise(async () => {
          const answer = await fetch(link)
          return answer.status === 404 ? undefined : answer.text()
        })))

/** The behaviour every backing of ExportStorage (memory, local, s3) must show. */
export const exportStorageContract = <ExcludeTestServices extends boolean>(it: Vitest.MethodsNonLive<ExportStorage, ExcludeTestServices>) => {
  it.effect("stores the streamed pieces as one file and reads it back whole, with its size", () =>
    Effect.gen(function*() {
      const storage = yield* ExportStorage
      const filePath = freshPath()
      const pieces = Array.from({ length: 2000 }, (_, i) => `row ${i},é,"x"\r\n`)
      const expected = pieces.join("")
      expect(yield* storage.write(filePath, Stream.fromIterable(pieces))).toEqual({ filePath, bytes: Buffer.byteLength(expected) })
      expect(yield* contentOf(storage, filePath)).toBe(expected)
      const served = yield* storage.read(filePath)
      if (Option.isSome(served)) expect(served.value.bytes).toBe(Buffer.byteLength(expected))
    }))

  it.effect("keeps complete files only: content that fails midway leaves nothing at the path, with the content's own error", () =>
    Effect.gen(function*() {
      const storage = yield* ExportStorage
      const filePath = freshPath()
      const failing = Stream.concat(Stream.make("header\r\n", "row\r\n"), Stream.fail("database gone" as const))
      expect(yield* Effect.either(storage.write(filePath, failing))).toEqual(Either.left("database gone"))
      expect(yield* contentOf(storage, filePath)).toBeUndefined()
    }))

  it.effect("has no content for a file never written", () =>
    Effect.gen(function*() {
      const storage = yield* ExportStorage
      expect(yield* contentOf(storage, freshPath())).toBeUndefined()
    }))

  it.effect("links a stored file", () =>
    Effect.gen(function*() {
      const storage = yield* ExportStorage
      const filePath = freshPath()
      yield* storage.write(filePath, Stream.make("a,b\r\n"))
      const link = yield* storage.downloadUrl(filePath)
      expect(link).toContain(filePath)
    }))

  it.effect("refuses to write or link paths that are not export file paths", () =>
    Effect.gen(function*() {
      const storage = yield* ExportStorage
      for (const bad of ["../escape.csv", `users-usage/x/../../escape.csv`, ".partial/a.part"]) {
        const written = yield* Effect.either(storage.write(bad, Stream.make("x")))
        expect(Either.isLeft(written) && written.left._tag === "InvalidExportPath", bad).toBe(true)
        const linked = yield* Effect.either(storage.downloadUrl(bad))
        expect(Either.isLeft(linked) && linked.left._tag === "InvalidExportPath", bad).toBe(true)
      }
    }))
}
