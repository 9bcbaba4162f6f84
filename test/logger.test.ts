import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { vi } from "vitest"
import { JsonLogger, PrettyLogger } from "../src/logger"

/** The lines the logger writes while the effect runs. */
const writtenBy = (effect: Effect.Effect<void>, logger: typeof JsonLogger): Array<string> => {
  const written: Array<string> = []
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    written.push(String(chunk))
    return true
  })
  try {
    Effect.runSync(Effect.provide(effect, logger))
  } finally {
    spy.mockRestore()
  }
  return written
}

const linesOf = (effect: Effect.Effect<void>): Array<Record<string, any>> =>
  writtenBy(effect, JsonLogger).map((line) => {
    expect(line.endsWith("\n")).toBe(true)
    return JSON.parse(line)
  })

describe("the JSON logger", () => {
  it("writes one JSON line per entry, with level, time and annotations", () => {
    const [line, ...rest] = linesOf(Effect.logInfo("request").pipe(Effect.annotateLogs({ requestId: "req_1", status: 200 })))
    expect(rest).toEqual([])
    expect(line).toMatchObject({ message: "request", logLevel: "INFO", annotations: { requestId: "req_1", status: 200 } })
    expect(Date.parse(line!.timestamp)).not.toBeNaN()
  })

  it("keeps the name and message of errors, and writes entries plain JSON cannot hold", () => {
    const circular: Record<string, unknown> = { name: "loop" }
    circular.self = circular
    const [error, cyclic] = linesOf(
      Effect.zipRight(Effect.logError("failed", new TypeError("bad value")), Effect.logWarning("odd").pipe(Effect.annotateLogs({ circular })))
    )
    expect(error!.message).toEqual(["failed", expect.objectContaining({ name: "TypeError", message: "bad value" })])
    expect(cyclic).toMatchObject({ message: "odd", logLevel: "WARN", annotations: { circular: { name: "loop" } } })
  })
})

describe("the pretty logger (LOG_FORMAT=pretty)", () => {
  it("writes one readable line per entry: time, level, message, key=value annotations", () => {
    const lines = writtenBy(
      Effect.logInfo("listening").pipe(Effect.annotateLogs({ url: "http://127.0.0.1:8080", note: "two words", status: 200, list: ["a"] })).pipe(
        Effect.zipRight(Effect.logError("failed", new TypeError("bad value")))
      ),
      PrettyLogger
    )
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z INFO {2}listening /)
    // Annotations in any order, each key=value, quoted only when needed.
    expect(lines[0]!.trimEnd().split(/ +/).slice(3).sort()).toEqual(["list=[\"a\"]", "note=\"two", "status=200", "url=http://127.0.0.1:8080", "words\""])
    expect(lines[1]).toMatch(/ ERROR failed "TypeError: bad value"\n$/)
  })
})
