import { describe, expect, it } from "vitest"
import { maxJsonDepth, textNestsDeeper, tooDeepPath } from "../../src/domain/jsonDepth"

/** `levels` arrays nested in one another: [[[…]]]. */
const nested = (levels: number): string => "[".repeat(levels) + "]".repeat(levels)

describe("JSON nesting depth", () => {
  it("names the field nested too deep, its first segments, in wire notation", () => {
    const schema = JSON.parse(`{"type":"object","properties":{"a":${nested(5_000)}}}`) as unknown
    expect(tooDeepPath({ model: "m", tools: [{ name: "t", input_schema: schema }] }, maxJsonDepth))
      .toBe("tools[0].input_schema.properties.a[0]")
    expect(tooDeepPath({ metadata: JSON.parse(nested(100_000)) }, maxJsonDepth)).toBe("metadata[0][0][0][0][0]")
    expect(tooDeepPath(JSON.parse(nested(100)), maxJsonDepth)).toBe("[0][0][0][0][0][0]")
  })

  it("lets through what is within the bound, wherever it sits", () => {
    expect(tooDeepPath(JSON.parse(nested(maxJsonDepth)), maxJsonDepth)).toBeUndefined()
    expect(tooDeepPath(JSON.parse(nested(maxJsonDepth + 1)), maxJsonDepth)).toBe("[0][0][0][0][0][0]")
    const wide = { messages: Array.from({ length: 1_000 }, (_, i) => ({ role: "user", content: [{ type: "text", text: `${i}` }] })) }
    expect(tooDeepPath(wide, maxJsonDepth)).toBeUndefined()
    // The deep value is the last of many: found all the same.
    expect(tooDeepPath({ ...wide, zz: { deeper: JSON.parse(nested(70)) } }, maxJsonDepth)).toBe("zz.deeper[0][0][0][0]")
    expect(tooDeepPath("text", 0)).toBeUndefined()
    expect(tooDeepPath({}, 0)).toBe("body")
  })

  it("reads the depth of text without parsing it, brackets inside strings not counted", () => {
    expect(textNestsDeeper(nested(maxJsonDepth), maxJsonDepth)).toBe(false)
    expect(textNestsDeeper(nested(maxJsonDepth + 1), maxJsonDepth)).toBe(true)
    expect(textNestsDeeper(`{"a":"${"[".repeat(500)}"}`, maxJsonDepth)).toBe(false)
    expect(textNestsDeeper(`{"a":"\\"${"{".repeat(500)}"}`, maxJsonDepth)).toBe(false)
    expect(textNestsDeeper(`{"a\\\\":${nested(200)}}`, maxJsonDepth)).toBe(true)
    expect(textNestsDeeper(`{"events":[{"metadata":${nested(5_000)}}]}`, maxJsonDepth)).toBe(true)
  })
})
