import { GptEncoding } from "gpt-tokenizer/GptEncoding"
import { CL100K_TOKEN_SPLIT_REGEX, O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { makeBytePairCounter } from "../../src/domain/bytePairCount"
import { openRankTable, packRanks, type RankEntry } from "../../src/domain/rankTable"
import { maxTokenBytes } from "../../src/domain/requestBounds"

const root = path.resolve(import.meta.dirname, "../..")

/** A seeded generator: the same corpus on every run. */
const seeded = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}

/** Texts of every kind the pattern splits differently: words, code, digits, scripts, emoji, lone surrogates, runs. */
const corpus = (): ReadonlyArray<string> => {
  const random = seeded(7)
  const parts = ["a", "e", " ", "\n", "\t", "  ", "é", "ü", "中", "文", "😀", "👍🏽", "1", "23", "456", ".", ",", "{", "}", '"', "\\", "'s",
    "'LL", "-", "ß", "ж", "ع", "ह", "\u0301", "\r\n", "\uD800", "<|endoftext|>", "The", " the", " quick", "HTTPServer", "x".repeat(70)]
  const texts: Array<string> = []
  for (let i = 0; i < 1500; i++) {
    texts.push(Array.from({ length: Math.floor(random() * 60) }, () => parts[Math.floor(random() * parts.length)]!).join(""))
  }
  for (let i = 0; i < 100; i++) {
    texts.push(Array.from({ length: 100 + Math.floor(random() * 300) }, () => String.fromCharCode(Math.floor(random() * 0xffff))).join(""))
    texts.push(Array.from({ length: 100 + Math.floor(random() * 300) }, () => String.fromCharCode(33 + Math.floor(random() * 94))).join(""))
  }
  texts.push(
    fs.readFileSync(path.join(root, "src/services/forwarding/Forwarder.ts"), "utf8"),
    fs.readFileSync(path.join(root, "README.md"), "utf8"),
    "a".repeat(3000),
    "ab".repeat(2000),
    "😀".repeat(300),
    "中文".repeat(700),
    Array.from({ length: 5000 }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join("")
  )
  return texts
}

const encodings = [
  { name: "cl100k_base", pattern: CL100K_TOKEN_SPLIT_REGEX, ranks: () => import("gpt-tokenizer/bpeRanks/cl100k_base") },
  { name: "o200k_base", pattern: O200K_TOKEN_SPLIT_REGEX, ranks: () => import("gpt-tokenizer/bpeRanks/o200k_base") }
] as const

describe.each(encodings)("byte-pair counting with $name", ({ name, pattern, ranks }) => {
  it("counts every text as gpt-tokenizer does (special tokens as plain text, long pieces included)", async () => {
    const table = (await ranks()).default as ReadonlyArray<RankEntry>
    const counter = makeBytePairCounter(openRankTable(packRanks(table))!, pattern)
    const reference = GptEncoding.getEncodingApi(name, () => table as Array<string | Array<number>>)
    const texts = corpus()
    const differing = texts.filter((text) => counter.count(text) !== reference.countTokens(text, { disallowedSpecial: new Set() }))
    expect(differing).toEqual([])
    // A counter reuses its scratch space: counting again gives the same.
    expect(texts.slice(0, 50).map(counter.count)).toEqual(texts.slice(0, 50).map((text) => reference.countTokens(text, { disallowedSpecial: new Set() })))
  })

  it("packs a table whose longest token is within the bound the request checks assume", async () => {
    const table = openRankTable(packRanks((await ranks()).default as ReadonlyArray<RankEntry>))!
    expect(table.maxTokenBytes).toBeGreaterThan(16)
    expect(table.maxTokenBytes).toBeLessThanOrEqual(maxTokenBytes)
  })
})

describe("packed rank tables", () => {
  it("finds each token's rank and nothing else", () => {
    const table = openRankTable(packRanks(["a", "b", "ab", [0xff, 0xfe], undefined, "abc"]))!
    const bytes = Uint8Array.from([0x61, 0x62, 0x63, 0xff, 0xfe])
    expect([table.rankOf(bytes, 0, 1), table.rankOf(bytes, 1, 2), table.rankOf(bytes, 0, 2), table.rankOf(bytes, 3, 5), table.rankOf(bytes, 0, 3)])
      .toEqual([0, 1, 2, 3, 5])
    expect([table.rankOf(bytes, 1, 3), table.rankOf(bytes, 2, 2), table.rankOf(bytes, 0, 5)]).toEqual([-1, -1, -1])
    expect(table.maxTokenBytes).toBe(3)
  })

  it("refuses bytes of another layout, and reads a table at any offset of a buffer", () => {
    const packed = packRanks(["x", "yz"])
    expect(openRankTable(packed.subarray(4))).toBeUndefined()
    expect(openRankTable(Uint8Array.from([1, 2, 3]))).toBeUndefined()
    const shifted = new Uint8Array(packed.length + 1)
    shifted.set(packed, 1)
    expect(openRankTable(shifted.subarray(1))?.rankOf(Uint8Array.from([0x79, 0x7a]), 0, 2)).toBe(1)
  })
})
