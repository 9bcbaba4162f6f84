import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SimulatorTokenizer, splitPieces } from "../../src/simulator/tokenizer"

describe("splitPieces", () => {
  it("splits into pieces that join back to the text", () => {
    const texts = ["Hello, world!  It's 12345 o'clock.\n\n  def f(x):\n    return x", "héllo 世界 — ok", "", "   "]
    for (const text of texts) expect(splitPieces(text).join("")).toBe(text)
    expect(splitPieces("Hello world")).toEqual(["Hello", " world"])
  })
})

describe("SimulatorTokenizer", () => {
  it.effect("approximate counts one token per short word", () =>
    Effect.gen(function* () {
      const tokenizer = yield* SimulatorTokenizer
      expect(tokenizer.count("")).toBe(0)
      expect(tokenizer.count("The quick brown fox.")).toBe(5)
      expect(tokenizer.count("internationalization")).toBeGreaterThan(1)
    }).pipe(Effect.provide(SimulatorTokenizer.approximate))
  )

  it.effect(
    "exact counts BPE tokens",
    () =>
      Effect.gen(function* () {
        const tokenizer = yield* SimulatorTokenizer
        expect(tokenizer.count("")).toBe(0)
        expect(tokenizer.count(" the")).toBe(1)
        expect(tokenizer.count("The quick brown fox jumps over the lazy dog.")).toBe(10)
      }).pipe(Effect.provide(SimulatorTokenizer.exact)),
    30_000
  )
})
