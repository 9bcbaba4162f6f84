import { Effect, Logger, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { UsageJournal } from "../../src/services/UsageJournal"
import { tempDir } from "../support/tempDirs"

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

describe("UsageJournal", () => {
  it("writes each line to a segment at once, and removes a segment once all its records are committed", async () => {
    const dir = fresh()
    await run(dir, Effect.gen(function*() {
      const journal = yield* UsageJournal
      const segments = [yield* journal.append("{\"a\":1}"), yield* journal.append("{\"a\":2}"), yield* journal.append("{\"a\":3}")].map(some)
      expect(new Set(segments).size).toBe(1)
      // On disk before any sync: a killed process would leave these lines.
      expect(fs.readFileSync(path.join(dir, files(dir)[0]!), "utf8")).toBe("{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n")
      yield* journal.committed(segments[0]!, 2)
      expect(files(dir)).toHaveLength(1)
      yield* journal.committed(segments[0]!, 1)
      expect(files(dir)).toEqual([])
      // The next line begins a new segment.
      expect(some(yield* journal.append("{\"a\":4}"))).toBeGreaterThan(segments[0]!)
    }))
  })

  it("begins a new segment beyond the size, and removes each drained one", async () => {
    const dir = fresh()
    await run(dir, Effect.gen(function*() {
      const journal = yield* UsageJournal
      const line = "x".repeat(40)
      const segments: Array<number> = []
      for (let i = 0; i < 10; i++) segments.push(some(yield* journal.append(line)))
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
      const segment = some(yield* journal.append("one"))
      yield* journal.append("two")
      yield* journal.spill(segment)
      yield* journal.committed(segment, 2)
      expect(files(dir)).toHaveLength(1)
      const reloaded = Option.getOrThrow(yield* journal.reload)
      expect(reloaded).toEqual({ segment, lines: ["one", "two"] })
      expect(Option.isNone(yield* journal.reload)).toBe(true)
      // Read back whole: later lines go to another segment.
      expect(some(yield* journal.append("three"))).not.toBe(segment)
      yield* journal.committed(segment, 2)
      expect(files(dir)).toHaveLength(1)
    }))
  })

  it("finds the segments an earlier run left, and reads them back", async () => {
    const dir = fresh()
    await run(dir, Effect.gen(function*() {
      const journal = yield* UsageJournal
      yield* journal.append("left-1")
      yield* journal.append("left-2")
    }))
    expect(files(dir)).toHaveLength(1)
    await run(dir, Effect.gen(function*() {
      const journal = yield* UsageJournal
      expect(yield* journal.segments).toBe(1)
      const reloaded = Option.getOrThrow(yield* journal.reload)
      expect(reloaded.lines).toEqual(["left-1", "left-2"])
      // New lines never go to an old segment.
      expect(some(yield* journal.append("new"))).toBeGreaterThan(reloaded.segment)
      yield* journal.committed(reloaded.segment, 2)
    }))
    expect(files(dir)).toHaveLength(1)
  })

  it("says once that the disk refuses the journal, and answers none (the record stays in memory)", async () => {
    const dir = fresh()
    const logged: Array<string> = []
    const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logged.push(String(message))))
    await Effect.runPromise(
      Effect.gen(function*() {
        const journal = yield* UsageJournal
        fs.rmSync(dir, { recursive: true })
        expect(Option.isNone(yield* journal.append("a"))).toBe(true)
        expect(Option.isNone(yield* journal.append("b"))).toBe(true)
        fs.mkdirSync(dir)
        expect(Option.isSome(yield* journal.append("c"))).toBe(true)
      }).pipe(
        Effect.provide(UsageJournal.layerWith({ directory: dir, syncEvery: "10 millis", segmentBytes: 1_000 })),
        Effect.provide(capture),
        Effect.scoped
      )
    )
    expect(logged.filter((line) => line.includes("cannot be written"))).toHaveLength(1)
    expect(logged.filter((line) => line.includes("writable again"))).toHaveLength(1)
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
