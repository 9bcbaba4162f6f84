import { Context, Effect, Layer } from "effect"
import { CL100K_TOKEN_SPLIT_REGEX, O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { type BytePairCounter, makeBytePairCounter } from "../../domain/bytePairCount"
import { openRankTable, packRanks, type RankEntry, type RankTable } from "../../domain/rankTable"
import { projectRoot } from "../../projectRoot"

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
 * How long a loaded table is kept without being used: loading it again is reading a file of a few MB (a
 * millisecond or two), and a table let go soon after the traffic stops is collected by the garbage collections
 * V8 makes then (let go later, it may stay until the next burst of work).
 */
export const tableIdleMs = 10_000

/** One encoding's table as the service holds it: loaded on first use, let go when unused for tableIdleMs. */
interface Slot {
  counter: BytePairCounter | undefined
  loading: Promise<BytePairCounter> | undefined
  usedAt: number
}

/**
 * Counts tokens with the real byte-pair encodings of the provider_a model families: the published rank tables
 * (gpt-tokenizer's, the same counts as the reference implementation) in a compact form, counted by
 * src/domain/bytePairCount.ts. Each table is loaded on first use and shared; one unused for tableIdleMs is let
 * go, so that an idle service does not hold it (bench/RESULTS.md, "Footprint").
 */
export class Tokenizer extends Context.Tag("Tokenizer")<Tokenizer, {
  readonly count: (encoding: Encoding, text: string) => Effect.Effect<number>
  /**
   * The encoding's counter if its table is loaded (a count is then a plain call, no step), marked used; undefined
   * while it is not: `count` loads it.
   */
  readonly ready: (encoding: Encoding) => BytePairCounter | undefined
  /** The encodings whose tables are held now. */
  readonly loaded: Effect.Effect<ReadonlyArray<Encoding>>
}>() {
  static readonly layerWith = (idleMs: number) =>
    Layer.scoped(
      Tokenizer,
      Effect.gen(function*() {
        const slots: Readonly<Record<Encoding, Slot>> = {
          cl100k_base: { counter: undefined, loading: undefined, usedAt: 0 },
          o200k_base: { counter: undefined, loading: undefined, usedAt: 0 }
        }
        const load = (encoding: Encoding, slot: Slot): Promise<BytePairCounter> =>
          slot.loading ??= loadTable(encoding).then(
            (table) => {
              slot.counter = makeBytePairCounter(table, splitPatterns[encoding])
              slot.loading = undefined
              return slot.counter
            },
            (error: unknown) => {
              // Tried again by the next count.
              slot.loading = undefined
              throw error
            }
          )
        // A look every half period: a table unused for a whole one is let go (in flight counts keep theirs).
        yield* Effect.acquireRelease(
          Effect.sync(() =>
            setInterval(() => {
              for (const slot of Object.values(slots)) {
                if (slot.counter !== undefined && performance.now() - slot.usedAt > idleMs) slot.counter = undefined
              }
            }, idleMs / 2).unref()
          ),
          (timer) => Effect.sync(() => clearInterval(timer))
        )
        const ready = (encoding: Encoding): BytePairCounter | undefined => {
          const slot = slots[encoding]
          slot.usedAt = performance.now()
          return slot.counter
        }
        return {
          count: (encoding, text) => {
            // Once loaded, a counter is used directly: going through a promise on every request cost more than
            // counting a short prompt.
            const counter = ready(encoding)
            return counter !== undefined
              ? Effect.sync(() => counter.count(text))
              : Effect.map(Effect.promise(() => load(encoding, slots[encoding])), (loaded) => loaded.count(text))
          },
          ready,
          loaded: Effect.sync(() => (Object.keys(slots) as Array<Encoding>).filter((encoding) => slots[encoding].counter !== undefined))
        }
      })
    )

  static readonly layer = Tokenizer.layerWith(tableIdleMs)
}
