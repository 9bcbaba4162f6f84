import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeRandom } from "../../src/simulator/deterministic"
import { chunkPieces, generateCode, generateProse, shapeOutput } from "../../src/simulator/textGenerator"
import { SimulatorTokenizer, type TokenCounter } from "../../src/simulator/tokenizer"

const withTokenizer = <A>(layer: typeof SimulatorTokenizer.exact, use: (counter: TokenCounter) => A) =>
  Effect.map(Effect.provide(SimulatorTokenizer, layer), use)

describe("generateProse", () => {
  it("is deterministic for a seed and differs between seeds", () => {
    expect(generateProse(makeRandom(1), 40)).toBe(generateProse(makeRandom(1), 40))
    expect(generateProse(makeRandom(1), 40)).not.toBe(generateProse(makeRandom(2), 40))
    expect(generateProse(makeRandom(1), 40)).toMatch(/^[A-Z][a-z]+ /)
  })

  it.effect(
    "has exactly the requested number of tokens, with either tokenizer",
    () =>
      Effect.gen(function* () {
        for (const layer of [SimulatorTokenizer.approximate, SimulatorTokenizer.exact]) {
          yield* withTokenizer(layer, (counter) => {
            for (const [seed, tokens] of [[1, 1], [2, 7], [3, 50], [4, 333]] as const) {
              const text = generateProse(makeRandom(seed), tokens)
              expect(shapeOutput(text, counter, {}).tokens).toBe(tokens)
              expect(counter.count(text)).toBe(tokens)
            }
          })
        }
      }),
    30_000
  )
})

describe("generateCode", () => {
  it("continues at the prompt's indentation with its identifiers", () => {
    const code = generateCode(makeRandom(5), { prompt: "def total_price(items):\n    ", suffix: "" }, 30)
    const lines = code.trimEnd().split("\n")
    expect(lines.length).toBeGreaterThan(1)
    expect(lines.slice(1).every((line) => line.startsWith("    "))).toBe(true)
    expect(code).toMatch(/total_price|items/)
  })

  it("opens a new indented line after a block opener", () => {
    const code = generateCode(makeRandom(6), { prompt: "function sum(values) {", suffix: "}" }, 10)
    expect(code.startsWith("\n    ")).toBe(true)
  })
})

describe("shapeOutput", () => {
  const counter: TokenCounter = { count: (text) => (text.length === 0 ? 0 : 1) }

  it("cuts before the earliest stop sequence", () => {
    const shaped = shapeOutput("one two three four", counter, { stop: ["four", "two"] })
    expect(shaped.text).toBe("one ")
    expect(shaped.stoppedBy).toBe("stop_sequence")
    expect(shaped.stopSequence).toBe("two")
  })

  it("cuts at the token limit and says so", () => {
    const shaped = shapeOutput("one two three four", counter, { maxTokens: 2 })
    expect(shaped.text).toBe("one two")
    expect(shaped.tokens).toBe(2)
    expect(shaped.stoppedBy).toBe("max_tokens")
  })

  it("is natural when nothing cuts it", () => {
    const shaped = shapeOutput("one two", counter, { maxTokens: 2, stop: ["zzz"] })
    expect(shaped).toMatchObject({ text: "one two", tokens: 2, stoppedBy: "natural", stopSequence: null })
  })
})

describe("chunkPieces", () => {
  it("groups pieces by token count without losing text", () => {
    const pieces = ["a", " b", " c", " d", " e"].map((text) => ({ text, tokens: 1 }))
    const chunks = chunkPieces(pieces, 2)
    expect(chunks.map((chunk) => chunk.text)).toEqual(["a b", " c d", " e"])
    expect(chunks.map((chunk) => chunk.tokens)).toEqual([2, 2, 1])
  })
})
