import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Redacted, Stream, TestClock } from "effect"
import { signDownload } from "../../../src/domain/signedUrl"
import { ExportDownloads } from "../../../src/services/exports/ExportDownloads"
import { ExportStorage } from "../../../src/services/exports/ExportStorage"
import { SigningSecret } from "../../../src/services/exports/SigningSecret"

const filePath = "users-usage/6f1c2b3a-0000-4000-8000-000000000001/users-usage-20260105-20260112-v1-abc123.csv"
const storage = ExportStorage.memory
const downloads = ExportDownloads.layer.pipe(
  Layer.provideMerge(Layer.merge(storage, SigningSecret.fixed("an export downloads test secret 0123456789")))
)

/** A link to the file signed with the service's own link key, valid until `expires` (unix seconds). */
const linkTo = (path: string, expires: number) =>
  Effect.map(SigningSecret, ({ linkKey }) => {
    const link = signDownload(Redacted.value(linkKey), path, expires)
    return { filePath: path, expires: String(link.expires), signature: link.signature }
  })

const text = (stream: Stream.Stream<Uint8Array, unknown>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => Buffer.concat(Chunk.toArray(chunks)).toString("utf8"))

describe("ExportDownloads", () => {
  it.effect("opens the file a valid link names", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(ExportStorage, (s) => s.write(filePath, Stream.make("a,b\r\n", "1,2\r\n")))
      const opened = yield* Effect.flatMap(ExportDownloads, (d) => Effect.flatMap(linkTo(filePath, 600), d.open))
      expect(opened.bytes).toBe(10)
      expect(yield* text(opened.stream)).toBe("a,b\r\n1,2\r\n")
    }).pipe(Effect.provide(downloads)))

  it.effect("refuses a changed signature, an expired link, a path outside the exports and a file no longer there", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(ExportStorage, (s) => s.write(filePath, Stream.make("x")))
      const d = yield* ExportDownloads
      const valid = yield* linkTo(filePath, 600)
      const reason = (link: Parameters<typeof d.open>[0]) =>
        Effect.map(Effect.flip(d.open(link)), (e) => (e._tag === "DownloadRefused" ? e.reason : e._tag))
      expect(yield* reason({ ...valid, signature: valid.signature.replace(/^./, (c) => (c === "0" ? "1" : "0")) })).toBe("bad_signature")
      expect(yield* reason({ ...valid, expires: "601" })).toBe("bad_signature")
      expect(yield* reason({ filePath: "../etc/passwd", expires: valid.expires, signature: valid.signature })).toBe("bad_path")
      const otherFile = filePath.replace("abc123", "def456")
      expect(yield* reason(yield* linkTo(otherFile, 600))).toBe("gone")
      yield* TestClock.adjust("600 seconds")
      expect(yield* reason(valid)).toBe("expired")
    }).pipe(Effect.provide(downloads)))
})
