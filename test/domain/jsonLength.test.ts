import { describe, expect, it } from "vitest"
import { jsonLength } from "../../src/domain/jsonLength"

/** A seeded generator: the same values on every run. */
const seeded = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}

describe("the length of a value's JSON text", () => {
  const random = seeded(3)
  const text = () =>
    Array.from({ length: Math.floor(random() * 40) }, () =>
      ["a", " ", "\"", "\\", "\n", "\t", "\u0001", "\u001f", "é", "中", "😀", "\uD800", "\uDC00x", "\b", "\f", "\r", "/"][Math.floor(random() * 17)]
    ).join("")
  const value = (depth: number): unknown => {
    const pick = Math.floor(random() * (depth > 4 ? 5 : 8))
    switch (pick) {
      case 0:
        return text()
      case 1:
        return [0, -1.5, 1e21, 3.14159, Number.NaN, Number.POSITIVE_INFINITY, 1e-7][Math.floor(random() * 7)]
      case 2:
        return random() < 0.5
      case 3:
        return null
      case 4:
        return undefined
      case 5:
        return Array.from({ length: Math.floor(random() * 5) }, () => value(depth + 1))
      default:
        return Object.fromEntries(Array.from({ length: Math.floor(random() * 5) }, () => [text(), value(depth + 1)]))
    }
  }

  it("is JSON.stringify's, for every kind of value, escapes and lone surrogates included", () => {
    const values = Array.from({ length: 2_000 }, () => ({ root: value(0) }))
    expect(values.filter((v) => jsonLength(v) !== JSON.stringify(v).length)).toEqual([])
  })

  it("measures objects as a replacer would give them", () => {
    const body = [{ type: "image", source: { type: "base64", data: "x".repeat(1_000) } }, { type: "text", text: "hi" }]
    const replace = (item: object): object => ("type" in item && item.type === "base64" ? { ...item, data: "" } : item)
    expect(jsonLength(body, replace)).toBe(JSON.stringify(body, (_key, item: unknown) => (typeof item === "object" && item !== null ? replace(item) : item)).length)
    expect(jsonLength({ at: new Date(0) })).toBe(JSON.stringify({ at: new Date(0) }).length)
  })
})
