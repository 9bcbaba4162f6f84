import { describe, expect, it } from "vitest"
import { builtInCatalog } from "../../src/domain/models"
import {
  boundCost,
  boundCount,
  boundCounts,
  boundedCost,
  boundUsage,
  maxCostUsd,
  maxInteger,
  settledTokens,
  unknownModelCeiling,
  usageCeiling
} from "../../src/domain/usageBounds"

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

describe("usage bounded by what the request could consume", () => {
  const chatgen4o = builtInCatalog.find("provider_a", "chat_completions", "chatgen-4o")

  it("takes the model's context for input and the request's maximum output, else the model's limit", () => {
    expect(usageCeiling(chatgen4o, 16)).toEqual({ inputTokens: 128_000, outputTokens: 16 })
    expect(usageCeiling(chatgen4o, undefined)).toEqual({ inputTokens: 128_000, outputTokens: 16_384 })
    // FIM's model has no output limit of its own: input and output share its context.
    expect(usageCeiling(builtInCatalog.find("provider_c", "fim", "codemodel-2501"), undefined)).toEqual({ inputTokens: 256_000, outputTokens: 256_000 })
    expect(usageCeiling(undefined, undefined)).toEqual({ inputTokens: unknownModelCeiling, outputTokens: unknownModelCeiling })
  })

  it("records 1e300 claimed tokens as the ceiling, and a negative, NaN or infinite figure, each flagged", () => {
    const claimed = boundUsage({ inputTokens: 1e300, outputTokens: 1e300 }, usageCeiling(chatgen4o, 16))
    expect(claimed.value).toEqual({ inputTokens: 128_000, outputTokens: 16 })
    expect(claimed.clamped.map((field) => field.field)).toEqual(["inputTokens", "outputTokens"])
    const negative = boundUsage({ inputTokens: -4, outputTokens: Number.NaN }, usageCeiling(chatgen4o, 16))
    expect(negative.value).toEqual({ inputTokens: 0, outputTokens: 0 })
    expect(negative.clamped).toEqual([
      { field: "inputTokens", received: "-4", recorded: 0 },
      { field: "outputTokens", received: "NaN", recorded: 0 }
    ])
    const infinite = boundUsage({ inputTokens: 3, outputTokens: Number.POSITIVE_INFINITY }, usageCeiling(undefined, undefined))
    expect(infinite.value).toEqual({ inputTokens: 3, outputTokens: unknownModelCeiling })
    expect(infinite.clamped).toHaveLength(1)
  })

  it("leaves usage within the bounds as it is, unflagged", () => {
    expect(boundUsage({ inputTokens: 128_000, outputTokens: 16 }, usageCeiling(chatgen4o, 16))).toEqual({
      value: { inputTokens: 128_000, outputTokens: 16 },
      clamped: []
    })
    expect(boundCount(5, 0)).toBe(0)
    expect(boundCount(7, 10.9)).toBe(7)
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
