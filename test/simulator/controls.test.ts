import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { readControls } from "../../src/simulator/controls"
import { defaultSimulatorSettings } from "../../src/simulator/settings"

const read = (headers: Record<string, string>, rawBody = "{}") =>
  readControls(defaultSimulatorSettings, { path: "/v1/chat/completions", header: (name) => headers[name], rawBody })

describe("readControls", () => {
  it("uses the settings when nothing is asked", () => {
    const controls = Either.getOrThrow(read({}))
    expect(controls).toMatchObject({
      latencyMs: defaultSimulatorSettings.latencyMs,
      chunkTokens: defaultSimulatorSettings.chunkTokens,
      fault: undefined,
      reply: "generate",
      outputTokens: undefined
    })
  })

  it("reads headers", () => {
    const controls = Either.getOrThrow(
      read({ "x-simulator-fault": "rate_limit", "x-simulator-fault-times": "2", "x-simulator-output-tokens": "40", "x-simulator-chunk-tokens": "3" })
    )
    expect(controls).toMatchObject({ fault: "rate_limit", faultTimes: 2, outputTokens: 40, chunkTokens: 3 })
  })

  it("reads a directive in the body, and headers win over it", () => {
    const body = JSON.stringify({ messages: [{ role: "user", content: "hi [simulator fault=overloaded latency_ms=5 reply=echo]" }] })
    expect(Either.getOrThrow(read({}, body))).toMatchObject({ fault: "overloaded", latencyMs: 5, reply: "echo" })
    expect(Either.getOrThrow(read({ "x-simulator-latency-ms": "9" }, body))).toMatchObject({ latencyMs: 9 })
  })

  it("derives the fault key from path and body unless one is given", () => {
    const faulty = { "x-simulator-fault": "rate_limit" }
    const a = Either.getOrThrow(read(faulty, '{"a":1}'))
    const b = Either.getOrThrow(read(faulty, '{"a":2}'))
    expect(a.faultKey.length).toBeGreaterThan(0)
    expect(a.faultKey).not.toBe(b.faultKey)
    expect(Either.getOrThrow(read(faulty, '{"a":1}')).faultKey).toBe(a.faultKey)
    expect(Either.getOrThrow(read({ ...faulty, "x-simulator-fault-key": "k" })).faultKey).toBe("k")
  })

  it("rejects unknown faults, controls and bad numbers", () => {
    expect(Either.isLeft(read({ "x-simulator-fault": "meteor" }))).toBe(true)
    expect(Either.isLeft(read({ "x-simulator-chunk-tokens": "0" }))).toBe(true)
    expect(Either.isLeft(read({ "x-simulator-latency-ms": "-1" }))).toBe(true)
    expect(Either.isLeft(read({}, "[simulator colour=blue]"))).toBe(true)
  })
})
