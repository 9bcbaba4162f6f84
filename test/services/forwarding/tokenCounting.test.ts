import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { textSlices } from "../../../src/domain/requestBounds"
import { countTextParts, countTokens } from "../../../src/services/forwarding/tokenCounting"
import { Tokenizer } from "../../../src/services/forwarding/Tokenizer"

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

describe("counting a prompt of many parts", () => {
  const parts = [
    ...Array.from({ length: 300 }, (_, i) => JSON.stringify({ role: "user", content: `message ${i}: some words to count` })),
    JSON.stringify({ role: "user", content: "long ".repeat(20_000) }),
    ...Array.from({ length: 300 }, (_, i) => `part ${i}`)
  ]

  it("counts short prompts joined, exactly; long ones part by part, within a token a slice, never joined", async () => {
    const [joined, counted, short, shortJoined] = await run(Effect.flatMap(Tokenizer, (tokenizer) =>
      Effect.all([
        tokenizer.count("o200k_base", parts.join("\n")),
        countTextParts(tokenizer, "o200k_base", parts),
        countTextParts(tokenizer, "o200k_base", parts.slice(0, 3)),
        tokenizer.count("o200k_base", parts.slice(0, 3).join("\n"))
      ])))
    expect(short).toBe(shortJoined)
    expect(Math.abs(joined - counted)).toBeLessThanOrEqual(textSlices(parts.join("\n")).length + 2)
  })

  it("stops past the limit", async () => {
    const stopped = await run(Effect.flatMap(Tokenizer, (tokenizer) => countTextParts(tokenizer, "o200k_base", parts, 1_000)))
    expect(stopped).toBeGreaterThan(1_000)
    expect(stopped).toBeLessThan(20_000)
  })
})

describe("the tokenizer's tables", () => {
  it("are loaded on first use and let go when unused for a while, loaded again when needed", async () => {
    const text = "Tables are held only while they are used."
    const [first, heldAfterUse, heldWhenQuiet, again, heldAgain] = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      expect(yield* tokenizer.loaded).toEqual([])
      const first = yield* tokenizer.count("o200k_base", text)
      const heldAfterUse = yield* tokenizer.loaded
      // Polled, not slept: let go within two periods of the idle time.
      let heldWhenQuiet = yield* tokenizer.loaded
      for (let tries = 0; tries < 100 && heldWhenQuiet.length > 0; tries++) {
        yield* Effect.sleep("20 millis")
        heldWhenQuiet = yield* tokenizer.loaded
      }
      const again = yield* tokenizer.count("o200k_base", text)
      return [first, heldAfterUse, heldWhenQuiet, again, yield* tokenizer.loaded] as const
    }).pipe(Effect.provide(Tokenizer.layerWith(100)))))
    expect(heldAfterUse).toEqual(["o200k_base"])
    expect(heldWhenQuiet).toEqual([])
    expect(again).toBe(first)
    expect(heldAgain).toEqual(["o200k_base"])
  })
})
