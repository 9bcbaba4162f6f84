import { describe, expect, it } from "vitest"
import { boundCost, boundCount, boundCounts, boundedCost, maxCostUsd, maxInteger, settledTokens, unknownModelCeiling } from "../../src/domain/usageBounds"

describe("usage bounds", () => {
  it("brings counts into the integer column's range", () => {
    expect(boundCount(12)).toBe(12)
    expect(boundCount(5.5)).toBe(6)
    expect(boundCount(5.4)).toBe(5)
    expect(boundCount(1e10)).toBe(maxInteger)
    expect(boundCount(Number.POSITIVE_INFINITY)).toBe(maxInteger)
    expect(boundCount(-3)).toBe(0)
    expect(boundCount(Number.NEGATIVE_INFINITY)).toBe(0)
    expect(boundCount(Number.NaN)).toBe(0)
    expect(Object.is(boundCount(-0.2), 0)).toBe(true)
  })

  it("brings costs into the numeric column's range", () => {
    expect(boundCost(0.25)).toBe(0.25)
    expect(boundCost(1e12)).toBe(maxCostUsd)
    expect(boundCost(-1)).toBe(0)
    expect(boundCost(Number.NaN)).toBe(0)
    expect(boundCost(Number.POSITIVE_INFINITY)).toBe(maxCostUsd)
  })

  it("lists what it changed, and only that", () => {
    const sane = boundCounts({ inputTokens: 10, outputTokens: 20 })
    expect(sane).toEqual({ value: { inputTokens: 10, outputTokens: 20 }, clamped: [] })
    const hostile = boundCounts({ inputTokens: 5.5, outputTokens: 1e10, latencyMs: Number.NaN })
    expect(hostile.value).toEqual({ inputTokens: 6, outputTokens: maxInteger, latencyMs: 0 })
    expect(hostile.clamped).toEqual([
      { field: "inputTokens", received: "5.5", recorded: 6 },
      { field: "outputTokens", received: "10000000000", recorded: maxInteger },
      { field: "latencyMs", received: "NaN", recorded: 0 }
    ])
    expect(boundedCost(3).clamped).toEqual([])
    expect(boundedCost(-2).clamped).toEqual([{ field: "costUsd", received: "-2", recorded: 0 }])
  })
})

describe("tokens settled against the rate limits", () => {
  it("are what was used, up to the model's context or what was reserved", () => {
    expect(settledTokens(1_200, 5_000, 128_000)).toBe(1_200)
    expect(settledTokens(maxInteger, 5_000, 128_000)).toBe(128_000)
    // Many embedding inputs: the exact reservation is above one input's context.
    expect(settledTokens(300_000, 300_000, 8_192)).toBe(300_000)
    expect(settledTokens(maxInteger, 300_000, 8_192)).toBe(300_000)
    expect(settledTokens(maxInteger, 1_000, undefined)).toBe(unknownModelCeiling)
  })
})
