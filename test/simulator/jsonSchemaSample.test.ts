import { describe, expect, it } from "@effect/vitest"
import { makeRandom } from "../../src/simulator/deterministic"
import { sampleJsonSchema } from "../../src/simulator/jsonSchemaSample"

describe("sampleJsonSchema", () => {
  it("fills required properties with values of their types", () => {
    const schema = {
      type: "object",
      properties: {
        city: { type: "string" },
        days: { type: "integer", minimum: 1, maximum: 7 },
        unit: { enum: ["celsius", "fahrenheit"] },
        hourly: { type: "boolean" },
        tags: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 2 },
        at: { type: "string", format: "date-time" }
      },
      required: ["city", "days", "unit", "hourly", "tags", "at"]
    }
    for (let seed = 0; seed < 20; seed++) {
      const value = sampleJsonSchema(schema, makeRandom(seed)) as Record<string, unknown>
      expect(typeof value["city"]).toBe("string")
      expect(Number.isInteger(value["days"])).toBe(true)
      expect(value["days"]).toBeGreaterThanOrEqual(1)
      expect(value["days"]).toBeLessThanOrEqual(7)
      expect(["celsius", "fahrenheit"]).toContain(value["unit"])
      expect(typeof value["hourly"]).toBe("boolean")
      expect(value["tags"]).toHaveLength(2)
      expect(Number.isNaN(Date.parse(String(value["at"])))).toBe(false)
    }
  })

  it("follows local references and const", () => {
    const schema = {
      type: "object",
      properties: { address: { $ref: "#/$defs/Address" } },
      required: ["address"],
      $defs: { Address: { type: "object", properties: { country: { const: "NL" } }, required: ["country"] } }
    }
    expect(sampleJsonSchema(schema, makeRandom(1))).toEqual({ address: { country: "NL" } })
  })

  it("is deterministic for a seed", () => {
    const schema = { type: "object", properties: { a: { type: "string" }, b: { type: "number" } } }
    expect(sampleJsonSchema(schema, makeRandom(9))).toEqual(sampleJsonSchema(schema, makeRandom(9)))
  })

  it("answers null for a schema that is not an object", () => {
    expect(sampleJsonSchema("nonsense", makeRandom(1))).toBeNull()
  })
})
