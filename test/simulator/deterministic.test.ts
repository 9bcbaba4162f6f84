import { describe, expect, it } from "@effect/vitest"
import { base62Digest, hashString, hexDigest, makeRandom, randomFor } from "../../src/simulator/deterministic"

describe("deterministic", () => {
  it("hashes equal texts equally and different texts or seeds differently", () => {
    expect(hashString("hello")).toBe(hashString("hello"))
    expect(hashString("hello")).not.toBe(hashString("hellp"))
    expect(hashString("hello", 1)).not.toBe(hashString("hello", 2))
  })

  it("repeats the same random stream for the same seed", () => {
    const a = makeRandom(42)
    const b = makeRandom(42)
    const first = Array.from({ length: 20 }, () => a.next())
    expect(Array.from({ length: 20 }, () => b.next())).toEqual(first)
    expect(new Set(first).size).toBe(20)
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true)
  })

  it("keeps int within bounds, both included", () => {
    const random = makeRandom(7)
    const seen = new Set(Array.from({ length: 500 }, () => random.int(3, 6)))
    expect([...seen].sort()).toEqual([3, 4, 5, 6])
  })

  it("separates streams by purpose", () => {
    expect(randomFor("request", "a").next()).not.toBe(randomFor("request", "b").next())
    expect(randomFor("request", "a").next()).toBe(randomFor("request", "a").next())
  })

  it("digests in the requested alphabet and length", () => {
    expect(hexDigest(["x", 1], 32)).toMatch(/^[0-9a-f]{32}$/)
    expect(base62Digest(["x"], 40)).toMatch(/^[0-9A-Za-z]{40}$/)
    expect(hexDigest(["x", 1], 32)).not.toBe(hexDigest(["x", 2], 32))
  })
})
