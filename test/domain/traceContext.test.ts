import { describe, expect, it } from "vitest"
import { formatTraceparent, parseTraceparent, sampleSpan, withinRatio } from "../../src/domain/traceContext"

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const spanId = "00f067aa0ba902b7"

describe("traceparent", () => {
  it("reads a caller's header and writes one back", () => {
    expect(parseTraceparent(`00-${traceId}-${spanId}-01`)).toEqual({ traceId, spanId, sampled: true })
    expect(parseTraceparent(`00-${traceId}-${spanId}-00`)).toEqual({ traceId, spanId, sampled: false })
    expect(formatTraceparent({ traceId, spanId, sampled: true })).toBe(`00-${traceId}-${spanId}-01`)
  })

  it("ignores what the W3C format calls invalid", () => {
    for (const bad of [undefined, "", "garbage", `ff-${traceId}-${spanId}-01`, `00-${"0".repeat(32)}-${spanId}-01`, `00-${traceId}-${"0".repeat(16)}-01`, `00-${traceId}-${spanId}`]) {
      expect(parseTraceparent(bad)).toBeUndefined()
    }
    expect(parseTraceparent([`00-${traceId}-${spanId}-01`, `00-${traceId}-${spanId}-01`])).toBeUndefined()
  })
})

describe("OTEL_TRACES_SAMPLER", () => {
  const sampled = { sampled: true }
  const unsampled = { sampled: false }
  it("follows the parent in the parentbased samplers and ignores it otherwise", () => {
    expect(sampleSpan({ kind: "parentbased_always_on" }, traceId, undefined)).toBe(true)
    expect(sampleSpan({ kind: "parentbased_always_on" }, traceId, unsampled)).toBe(false)
    expect(sampleSpan({ kind: "parentbased_always_off" }, traceId, undefined)).toBe(false)
    expect(sampleSpan({ kind: "parentbased_always_off" }, traceId, sampled)).toBe(true)
    expect(sampleSpan({ kind: "always_on" }, traceId, unsampled)).toBe(true)
    expect(sampleSpan({ kind: "always_off" }, traceId, sampled)).toBe(false)
  })

  it("samples a ratio of trace ids, the same answer for every span of a trace", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `${"a".repeat(24)}${(i * 2_147_483).toString(16).padStart(8, "0").slice(-8)}`)
    const share = ids.filter((id) => withinRatio(id, 0.25)).length / ids.length
    expect(share).toBeGreaterThan(0.2)
    expect(share).toBeLessThan(0.3)
    expect(sampleSpan({ kind: "traceidratio", ratio: 0 }, traceId, sampled)).toBe(false)
    expect(sampleSpan({ kind: "traceidratio", ratio: 1 }, traceId, unsampled)).toBe(true)
    expect(sampleSpan({ kind: "parentbased_traceidratio", ratio: 0 }, traceId, sampled)).toBe(true)
  })
})
