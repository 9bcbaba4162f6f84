import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FiberId, Logger, LogLevel } from "effect"
import { vi } from "vitest"
import { accessLogFor, accessLogLine, endStatus, fiberName } from "../../src/http/accessLog"
import { JsonLogger, PrettyLogger } from "../../src/logger"

const entry = { requestId: "req_1", method: "POST", path: "/provider_a/eu/v1/chat/completions", status: 200, durationMs: 1.5, address: "203.0.113.7", fiberId: "#7" }

/** What a function writes to stdout while it runs. */
const stdoutOf = (run: () => void): Array<string> => {
  const written: Array<string> = []
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    written.push(String(chunk))
    return true
  })
  try {
    run()
  } finally {
    spy.mockRestore()
  }
  return written
}

describe("the access log", () => {
  it("writes the line the JSON logger would write for the same entry", () => {
    const [viaLogger] = stdoutOf(() =>
      Effect.runSync(
        Effect.logInfo("request").pipe(
          Effect.annotateLogs({ requestId: entry.requestId, method: entry.method, path: entry.path, status: entry.status, durationMs: entry.durationMs, address: entry.address }),
          Effect.provide(JsonLogger)
        )
      )
    )
    const expected = JSON.parse(viaLogger!)
    const line = accessLogLine(entry, new Date("2026-11-23T10:00:00.000Z"))
    expect(line.endsWith("\n")).toBe(true)
    const written = JSON.parse(line)
    expect(written).toEqual({ ...expected, timestamp: "2026-11-23T10:00:00.000Z", fiberId: "#7" })
    expect(Object.keys(written)).toEqual(Object.keys(expected))
  })

  it("escapes the strings as JSON.stringify does, and names the fiber as Effect does", () => {
    const odd = { ...entry, requestId: "req_\"1\\", path: "/a\u0001\ud800b\u00e9", address: "::1" }
    const line = accessLogLine(odd, new Date("2026-11-23T10:00:00.000Z"))
    expect(line).toContain(`"path":${JSON.stringify(odd.path)}`)
    expect(JSON.parse(line).annotations).toMatchObject({ requestId: odd.requestId, path: odd.path, address: "::1" })
    const id = Effect.runSync(Effect.fiberId) as FiberId.Runtime
    expect(fiberName(id)).toBe(FiberId.threadName(id))
  })

  it("writes the line the pretty logger would write for the same entry, with LOG_FORMAT=pretty", () => {
    const [viaLogger] = stdoutOf(() =>
      Effect.runSync(
        Effect.logInfo("request").pipe(
          Effect.annotateLogs({ requestId: entry.requestId, method: entry.method, path: entry.path, status: entry.status, durationMs: entry.durationMs, address: entry.address }),
          Effect.provide(PrettyLogger)
        )
      )
    )
    const line = accessLogLine({ ...entry, path: "/odd path" }, new Date("2026-11-23T10:00:00.000Z"), "pretty")
    const expected = viaLogger!.replace(/^\S+/, "2026-11-23T10:00:00.000Z").replace(`path=${entry.path}`, 'path="/odd path"')
    // The same time, level and message, then the same fields (the logger orders annotations its own way).
    const parts = (text: string) => ({ head: text.slice(0, text.indexOf(" request ") + 9), fields: text.trim().split(" request ")[1]!.split(" ").sort() })
    expect(line.endsWith("\n")).toBe(true)
    expect(parts(line)).toEqual(parts(expected))
  })

  it("writes only when the runtime's minimum level lets info through", () => {
    const at = (level: LogLevel.LogLevel) =>
      Effect.runSync(Effect.runtime<never>().pipe(Logger.withMinimumLogLevel(level)))
    expect(stdoutOf(() => accessLogFor(at(LogLevel.Info))(entry))).toHaveLength(1)
    expect(stdoutOf(() => accessLogFor(at(LogLevel.Debug))(entry))).toHaveLength(1)
    expect(stdoutOf(() => accessLogFor(at(LogLevel.Warning))(entry))).toEqual([])
    expect(stdoutOf(() => accessLogFor(at(LogLevel.None))(entry))).toEqual([])
  })

  it("takes the answer's status, or 500 when the serving failed or was interrupted", () => {
    expect(endStatus(Exit.succeed(429))).toBe(429)
    expect(endStatus(Exit.die("boom"))).toBe(500)
    expect(endStatus(Exit.interrupt(Effect.runSync(Effect.fiberId)))).toBe(499)
  })
})
