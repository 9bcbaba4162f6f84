import { Effect, Logger, Option, Schedule } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { type JournalHealth, UsageJournal } from "../../../src/services/usage/2-UsageJournal"
import { canMakeReadOnly, canMount, fullDisk, makeReadOnly } from "../../support/refusingDisk"
import { tempDir } from "../../support/tempDirs"

const fresh = () => tempDir("ws-journal-unit-")
const files = (dir: string) => fs.readdirSync(dir).filter((name) => name.endsWith(".jsonl")).sort()
const run = <A>(dir: string, body: Effect.Effect<A, never, UsageJournal>, segmentBytes = 1_000_000) =>
  Effect.runPromise(
    body.pipe(
      Effect.provide(UsageJournal.layerWith({ directory: dir, syncEvery: "10 millis", segmentBytes })),
      Effect.scoped
    )
  )
const some = (segment: Option.Option<number>) => Option.getOrThrow(segment)
const fastRetry = { syncEvery: "10 millis", segmentBytes: 1_000_000, retryFirst: "10 millis", retryAtMost: "50 millis" } as const

/** Polls the journal's health until it is the one awaited (the background retry's doing). */
const untilHealth = (journal: typeof UsageJournal.Service, awaited: JournalHealth) =>
  journal.health.pipe(
    Effect.repeat({ until: (health) => health === awaited, schedule: Schedule.spaced("10 millis") }),
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`journal never ${awaited}`) }),
    Effect.orDie
  )

describe("UsageJournal", () => {
  it("writes each line to a segment at once, and removes a segment once all its records are committed", async () => {
    const dir = fresh()
    await run(dir, Effect.gen(function*() {
      const journal = yield* UsageJournal
      const segments = [journal.append("{\"a\":1}"), journal.append("{\"a\":2}"), journal.append("{\"a\":3}")].map(some)
      expect(new Set(segments).size).toBe(1)
      // On disk before any sync: a killed process would leave these lines.
      expect(fs.readFileSync(path.join(dir, files(dir)[0]!), "utf8")).toBe("{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n")
      yield* journal.committed(segments[0]!, 2)
      expect(files(dir)).toHaveLength(1)
      yield* journal.committed(segments[0]!, 1)
      expect(files(dir)).toEqual([])
      // The next line begins a new segment.
      expect(some(journal.append("{\"a\":4}"))).toBeGreaterThan(segments[0]!)
    }))
  })

  it("begins a new segment beyond the size, and removes each drained one", async () => {
    const dir = fresh()
    await run(dir, Effect.gen(function*() {
      const journal = yield* UsageJournal
      const line = "x".repeat(40)
      const segments: Array<number> = []
      for (let i = 0; i < 10; i++) segments.push(some(journal.append(line)))
      const distinct = [...new Set(segments)]
      expect(distinct.length).toBeGreaterThan(2)
      expect(files(dir)).toHaveLength(distinct.length)
      yield* journal.committed(distinct[0]!, segments.filter((s) => s === distinct[0]).length)
      expect(files(dir)).toHaveLength(distinct.length - 1)
    }), 100)
  })

  it("keeps a spilled segment until it is read back and its records are committed", async () => {
    const dir = fresh()
    await run(dir, Effect.gen(function*() {
      const journal = yield* UsageJournal
      const segment = some(journal.append("one"))
      journal.append("two")
      yield* journal.spill(segment)
      yield* journal.committed(segment, 2)
      expect(files(dir)).toHaveLength(1)
      const reloaded = Option.getOrThrow(yield* journal.reload)
      expect(reloaded).toEqual({ segment, lines: ["one", "two"] })
      expect(Option.isNone(yield* journal.reload)).toBe(true)
      // Read back whole: later lines go to another segment.
      expect(some(journal.append("three"))).not.toBe(segment)
      yield* journal.committed(segment, 2)
      expect(files(dir)).toHaveLength(1)
    }))
  })

  it("finds the segments an earlier run left, and reads them back", async () => {
    const dir = fresh()
    await run(dir, Effect.gen(function*() {
      const journal = yield* UsageJournal
      journal.append("left-1")
      journal.append("left-2")
    }))
    expect(files(dir)).toHaveLength(1)
    await run(dir, Effect.gen(function*() {
      const journal = yield* UsageJournal
      expect(yield* journal.segments).toBe(1)
      const reloaded = Option.getOrThrow(yield* journal.reload)
      expect(reloaded.lines).toEqual(["left-1", "left-2"])
      // New lines never go to an old segment.
      expect(some(journal.append("new"))).toBeGreaterThan(reloaded.segment)
      yield* journal.committed(reloaded.segment, 2)
    }))
    expect(files(dir)).toHaveLength(1)
  })

  it("says once that the disk refuses the journal, answers none (the record stays in memory), and recovers by itself", async () => {
    const dir = fresh()
    const logged: Array<string> = []
    const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logged.push(String(message))))
    await Effect.runPromise(
      Effect.gen(function*() {
        const journal = yield* UsageJournal
        expect(yield* journal.health).toBe("ok")
        fs.rmSync(dir, { recursive: true })
        expect(Option.isNone(journal.append("a"))).toBe(true)
        expect(Option.isNone(journal.append("b"))).toBe(true)
        expect(yield* journal.health).toBe("failing")
        fs.mkdirSync(dir)
        // Tried again in the background, with nothing appended meanwhile.
        yield* untilHealth(journal, "ok")
        const segment = some(journal.append("c"))
        expect(fs.readFileSync(path.join(dir, files(dir)[0]!), "utf8")).toBe("c\n")
        expect(segment).toBeGreaterThan(0)
      }).pipe(
        Effect.provide(UsageJournal.layerWith({ ...fastRetry, directory: dir })),
        Effect.provide(capture),
        Effect.scoped
      )
    )
    expect(logged.filter((line) => line.includes("cannot be written"))).toHaveLength(1)
    expect(logged.filter((line) => line.includes("writable again"))).toHaveLength(1)
  })

  it.skipIf(!canMount)("on a full disk, many failing appends leave one segment and no piece of a line; writes resume once there is room", async () => {
    const disk = fullDisk()
    try {
      await Effect.runPromise(
        Effect.gen(function*() {
          const journal = yield* UsageJournal
          const answers: Array<Option.Option<number>> = []
          // Longer than a page: the first write takes what is left of the disk, then fails.
          answers.push(journal.append("x".repeat(10_000)))
          for (let i = 0; i < 300; i++) answers.push(journal.append(`{"record":${i}}`))
          expect(answers.every(Option.isNone)).toBe(true)
          expect(yield* journal.health).toBe("failing")
          const segments = files(disk.directory)
          expect(segments.length).toBeLessThanOrEqual(1)
          // The piece of the long line that fitted was cut again.
          for (const segment of segments) expect(fs.statSync(path.join(disk.directory, segment)).size).toBe(0)

          disk.free()
          yield* untilHealth(journal, "ok")
          some(journal.append("{\"record\":\"after\"}"))
          // The segment tried all along is the one written now.
          expect(files(disk.directory)).toHaveLength(1)
          if (segments.length === 1) expect(files(disk.directory)).toEqual(segments)
          expect(fs.readFileSync(path.join(disk.directory, files(disk.directory)[0]!), "utf8")).toBe("{\"record\":\"after\"}\n")
        }).pipe(
          Effect.provide(UsageJournal.layerWith({ ...fastRetry, directory: disk.directory })),
          Effect.provide(Logger.remove(Logger.defaultLogger)),
          Effect.scoped
        )
      )
    } finally {
      disk.remove()
    }
  })

  it.skipIf(!canMakeReadOnly)("on a read-only folder makes no file at all, and writes again once the folder is writable", async () => {
    const dir = fresh()
    await Effect.runPromise(
      Effect.gen(function*() {
        const journal = yield* UsageJournal
        const restore = makeReadOnly(dir)
        yield* Effect.gen(function*() {
          for (let i = 0; i < 100; i++) expect(Option.isNone(journal.append(`line ${i}`))).toBe(true)
          expect(yield* journal.health).toBe("failing")
          expect(files(dir)).toEqual([])
        }).pipe(Effect.ensuring(Effect.sync(restore)))
        yield* untilHealth(journal, "ok")
        some(journal.append("back"))
        expect(files(dir)).toHaveLength(1)
      }).pipe(
        Effect.provide(UsageJournal.layerWith({ ...fastRetry, directory: dir })),
        Effect.provide(Logger.remove(Logger.defaultLogger)),
        Effect.scoped
      )
    )
  })

  it.skipIf(!canMakeReadOnly)("notices by itself, while idle, that its folder became read-only, and that it is writable again", async () => {
    const dir = fresh()
    await Effect.runPromise(
      Effect.gen(function*() {
        const journal = yield* UsageJournal
        const restore = makeReadOnly(dir)
        yield* untilHealth(journal, "failing").pipe(Effect.ensuring(Effect.sync(restore)))
        yield* untilHealth(journal, "ok")
        expect(fs.readdirSync(dir)).toEqual([])
      }).pipe(
        Effect.provide(UsageJournal.layerWith({ ...fastRetry, directory: dir, watchEvery: "20 millis" })),
        Effect.provide(Logger.remove(Logger.defaultLogger)),
        Effect.scoped
      )
    )
  })

  it("counts the records waiting on disk, those of an earlier run by their lines", async () => {
    const dir = fresh()
    await run(dir, Effect.gen(function*() {
      const journal = yield* UsageJournal
      journal.append("left-1")
      journal.append("left-2")
      expect(yield* journal.waiting).toBe(2)
    }))
    await run(dir, Effect.gen(function*() {
      const journal = yield* UsageJournal
      expect(yield* journal.waiting).toBe(2)
      const segment = some(journal.append("new"))
      expect(yield* journal.waiting).toBe(3)
      yield* journal.committed(segment, 1)
      expect(yield* journal.waiting).toBe(2)
    }))
  })

  it("refuses to start on a directory it cannot create", async () => {
    const file = path.join(fresh(), "a-file")
    fs.writeFileSync(file, "")
    const exit = await Effect.runPromiseExit(
      Effect.scoped(Effect.provide(UsageJournal, UsageJournal.layerWith({ directory: path.join(file, "journal"), syncEvery: "10 millis", segmentBytes: 1_000 })))
    )
    expect(exit._tag).toBe("Failure")
  })
})
