import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { textSlices } from "../../src/domain/requestBounds"
import { countTokens } from "../../src/services/tokenCounting"
import { Tokenizer } from "../../src/services/Tokenizer"

const run = <A>(effect: Effect.Effect<A, never, Tokenizer>) => Effect.runPromise(Effect.provide(effect, Tokenizer.layer))

describe("counting long texts in slices", () => {
  const text = Array.from({ length: 40_000 }, (_, i) => `word${i % 97} and some more text, line ${i}\n`).join("")

  it("cuts a text into slices that add up to it, mostly at line breaks", () => {
    const slices = textSlices(text)
    expect(slices.join("")).toBe(text)
    expect(slices.length).toBeGreaterThan(10)
    expect(slices.slice(0, -1).every((slice) => slice.endsWith("\n"))).toBe(true)
  })

  it("counts as the whole text does, within a token a slice", async () => {
    const [whole, sliced] = await run(Effect.flatMap(Tokenizer, (tokenizer) =>
      Effect.all([tokenizer.count("o200k_base", text), countTokens(tokenizer, "o200k_base", text)])))
    expect(Math.abs(whole - sliced)).toBeLessThanOrEqual(textSlices(text).length)
  })

  it("lets other work run between slices, and stops past the limit", async () => {
    let ticks = 0
    const timer = setInterval(() => void (ticks += 1), 0)
    const counted = await run(Effect.flatMap(Tokenizer, (tokenizer) => countTokens(tokenizer, "o200k_base", text.repeat(3))))
    clearInterval(timer)
    expect(counted).toBeGreaterThan(0)
    expect(ticks).toBeGreaterThan(0)
    const stopped = await run(Effect.flatMap(Tokenizer, (tokenizer) => countTokens(tokenizer, "o200k_base", text, 100)))
    expect(stopped).toBeGreaterThan(100)
    expect(stopped).toBeLessThan(counted / 3)
  })
})
