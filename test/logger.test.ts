import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { vi } from "vitest"
import { JsonLogger } from "../src/logger"

/** The lines the logger writes while the effect runs. */
const linesOf = (effect: Effect.Effect<void>): Array<Record<string, any>> => {
  const written: Array<string> = []
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    written.push(String(chunk))
    return true
  })
  try {
    Effect.runSync(Effect.provide(effect, JsonLogger))
  } finally {
    spy.mockRestore()
  }
  return written.map((line) => {
    expect(line.endsWith("\n")).toBe(true)
    return JSON.parse(line)
  })
}

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
