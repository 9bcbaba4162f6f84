import { Context, Effect, Layer } from "effect"
import { CL100K_TOKEN_SPLIT_REGEX, O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { type BytePairCounter, makeBytePairCounter } from "../domain/bytePairCount"
import { openRankTable, packRanks, type RankEntry, type RankTable } from "../domain/rankTable"
import { projectRoot } from "../projectRoot"

export type Encoding = "cl100k_base" | "o200k_base"

const splitPatterns: Readonly<Record<Encoding, RegExp>> = {
  cl100k_base: CL100K_TOKEN_SPLIT_REGEX,
  o200k_base: O200K_TOKEN_SPLIT_REGEX
}

/** The published table as gpt-tokenizer ships it (a generated module: only without a build, as in tests from src/). */
const packageRanks = (encoding: Encoding): Promise<ReadonlyArray<RankEntry>> =>
  (encoding === "cl100k_base" ? import("gpt-tokenizer/bpeRanks/cl100k_base") : import("gpt-tokenizer/bpeRanks/o200k_base"))
    .then((module) => module.default as ReadonlyArray<RankEntry>)

/**
 * One encoding's rank table: the file the build packs (dist/tokenizer/<encoding>.ranks, scripts/build.mjs), read
 * as it is (off the heap, ~4 MB for o200k_base); packed here from gpt-tokenizer's table when there is no build
 * or the file is of another layout.
 */
const loadTable = (encoding: Encoding): Promise<RankTable> =>
  fs.readFile(path.join(projectRoot, "dist/tokenizer", `${encoding}.ranks`)).then(
    (packed) => openRankTable(packed),
    () => undefined
  ).then(async (table) => table ?? openRankTable(packRanks(await packageRanks(encoding)))!)

/**
 * Counts tokens with the real byte-pair encodings of the provider_a model families: the published rank tables
 * (gpt-tokenizer's, the same counts as the reference implementation) in a compact form, counted by
 * src/domain/bytePairCount.ts. Each table is loaded on first use, once, and shared.
 */
export class Tokenizer extends Context.Tag("Tokenizer")<Tokenizer, {
  readonly count: (encoding: Encoding, text: string) => Effect.Effect<number>
}>() {
  static readonly layer = Layer.effect(
    Tokenizer,
    Effect.gen(function*() {
      const load = {
        cl100k_base: yield* Effect.cached(Effect.promise(() => loadTable("cl100k_base"))),
        o200k_base: yield* Effect.cached(Effect.promise(() => loadTable("o200k_base")))
      }
      // Once loaded, a counter is used directly: going through the cached effect on every request
      // cost more than counting a short prompt.
      const loaded: { -readonly [E in Encoding]?: BytePairCounter } = {}
      return {
        count: (encoding, text) => {
          const counter = loaded[encoding]
          return counter !== undefined
            ? Effect.sync(() => counter.count(text))
            : Effect.map(load[encoding], (table) => {
              const made = loaded[encoding] ?? makeBytePairCounter(table, splitPatterns[encoding])
              loaded[encoding] = made
              return made.count(text)
            })
        }
      }
    })
  )
}
