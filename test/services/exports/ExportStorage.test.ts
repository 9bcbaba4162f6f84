import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either, Layer, Stream, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ExportStorage } from "../../../src/services/exports/ExportStorage/index"
import { makeLocalExportStorage, sweepExpiredExports } from "../../../src/services/exports/ExportStorage/local"
import { makeMemoryExportStorage } from "../../../src/services/exports/ExportStorage/memory"
import { exportStorageContract, readAll } from "../../contracts/exportStorage"
import { tempDir } from "../../support/tempDirs"

const filePath = "users-usage/6f1c2b3a-0000-4000-8000-000000000001/users-usage-20260105-20260112-v1-abc123.csv"
const key = Buffer.from("a local storage test key 0123456")

const localStorage = () => {
  const root = tempDir("export-storage-test-")
  return { root, storage: makeLocalExportStorage({ root, linkBase: "http://files.example/base", linkTtlSeconds: 600, linkKey: key }) }
}

const filesUnder = (root: string) =>
  fs.existsSync(root) ? fs.readdirSync(root, { recursive: true }).map(String).filter((f) => fs.statSync(path.join(root, f)).isFile()) : []

// The contract of test/contracts/exportStorage.ts on the memory and local backings;
// test/integration/exportStorage.s3.test.ts runs it on S3.
layer(ExportStorage.memory)("ExportStorage.memory keeps the contract", exportStorageContract)
layer(Layer.sync(ExportStorage, () => localStorage().storage))("ExportStorage.local keeps the contract", exportStorageContract)

describe("ExportStorage.local", () => {
  it.effect("writes the file at its path under the root, and nothing else", () =>
    Effect.gen(function*() {
      const { root, storage } = localStorage()
      const pieces = Array.from({ length: 2000 }, (_, i) => `row ${i},é,"x"\r\n`)
      yield* storage.write(filePath, Stream.fromIterable(pieces))
      expect(fs.readFileSync(path.join(root, filePath), "utf8")).toBe(pieces.join(""))
      // Nothing is left behind besides the file.
      expect(filesUnder(root)).toEqual([filePath])
      expect(yield* readAll(storage, filePath)).toBe(pieces.join(""))
    }))

  it.effect("leaves no file at all when the content fails midway", () =>
    Effect.gen(function*() {
      const { root, storage } = localStorage()
      const failing = Stream.concat(Stream.make("header\r\n", "row\r\n"), Stream.fail("database gone" as const))
      expect(yield* Effect.either(storage.write(filePath, failing))).toEqual(Either.left("database gone"))
      expect(filesUnder(root)).toEqual([])
    }))

  it.live("leaves nothing when interrupted", () =>
    Effect.gen(function*() {
      const { root, storage } = localStorage()
      const endless = Stream.repeatValue("row\r\n").pipe(Stream.tap(() => Effect.sleep("1 millis")))
      yield* storage.write(filePath, endless).pipe(Effect.timeout("50 millis"), Effect.ignore)
      expect(filesUnder(root)).toEqual([])
    }))

  it.effect("refuses paths that are not export file paths", () =>
    Effect.gen(function*() {
      const { root, storage } = localStorage()
      for (const bad of ["../escape.csv", `users-usage/x/../../escape.csv`, ".partial/a.part"]) {
        const written = yield* Effect.either(storage.write(bad, Stream.make("x")))
        expect(Either.isLeft(written) && written.left._tag === "InvalidExportPath").toBe(true)
        expect(Either.isLeft(yield* Effect.either(storage.read(bad)))).toBe(true)
        expect(Either.isLeft(yield* Effect.either(storage.downloadUrl(bad)))).toBe(true)
      }
      expect(fs.existsSync(path.join(root, "..", "escape.csv"))).toBe(false)
    }))

  it.effect("signs links for PUBLIC_URL + BASE_PATH with the configured lifetime", () =>
    Effect.gen(function*() {
      const { storage } = localStorage()
      yield* TestClock.setTime(1_800_000_000_500)
      const link = new URL(yield* storage.downloadUrl(filePath))
      expect(`${link.origin}${link.pathname}`).toBe(`http://files.example/base/downloads/${filePath}`)
      expect(link.searchParams.get("expires")).toBe(String(1_800_000_000 + 600))
      expect(link.searchParams.get("signature")).toMatch(/^[0-9a-f]{64}$/)
    }))

  it.effect("sweeps files whose links have all expired and partial files a crash left, and nothing else", () =>
    Effect.gen(function*() {
      const { root, storage } = localStorage()
      const old = filePath.replace("v1-abc123", "v1-old")
      yield* storage.write(old, Stream.make("old\r\n"))
      yield* storage.write(filePath, Stream.make("fresh\r\n"))
      fs.mkdirSync(path.join(root, ".partial"), { recursive: true })
      fs.writeFileSync(path.join(root, ".partial", "crashed.part"), "half")
      fs.writeFileSync(path.join(root, ".partial", "running.part"), "half")
      fs.writeFileSync(path.join(root, "notes.txt"), "not an export")
      const now = Date.now()
      const ago = (ms: number) => new Date(now - ms)
      // Links live 600 s here: the old file is past that, the fresh one is not.
      fs.utimesSync(path.join(root, old), ago(601_000), ago(601_000))
      fs.utimesSync(path.join(root, filePath), ago(599_000), ago(599_000))
      fs.utimesSync(path.join(root, ".partial", "crashed.part"), ago(7 * 3_600_000), ago(7 * 3_600_000))
      fs.utimesSync(path.join(root, "notes.txt"), ago(30 * 86_400_000), ago(30 * 86_400_000))

      expect(yield* sweepExpiredExports(root, 600, now)).toBe(2)
      expect(filesUnder(root).sort()).toEqual([".partial/running.part", filePath, "notes.txt"].sort())
      expect(yield* sweepExpiredExports(path.join(root, "missing"), 600, now)).toBe(0)
    }))
})

describe("ExportStorage.memory", () => {
  it.effect("links a file as memory://<filePath>", () =>
    Effect.gen(function*() {
      const storage = yield* makeMemoryExportStorage
      yield* storage.write(filePath, Stream.make("a,b\r\n", "1,2\r\n"))
      expect(yield* storage.downloadUrl(filePath)).toBe(`memory://${filePath}`)
    }))
})
