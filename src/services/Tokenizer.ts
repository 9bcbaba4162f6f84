import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { RawBytePairRanks } from "gpt-tokenizer/BytePairEncodingCore"
import { projectRoot } from "../projectRoot"

export type Encoding = "cl100k_base" | "o200k_base"

interface Counter {
  readonly countTokens: (text: string) => number
}

/**
 * Loads one encoding. The build writes each rank table as JSON (dist/tokenizer/, scripts/build.mjs): parsed from
 * JSON it leaves neither the package's 2 MB module source (held as two-byte text) nor its array literal's
 * boilerplate in the heap, and loading o200k_base grows the process by about half as much (bench/RESULTS.md,
 * "Footprint"). Without a build (tests run from src/) the package's own module is imported.
 */
const loadEncoding = (encoding: Encoding): Promise<Counter> =>
  fs.readFile(path.join(projectRoot, "dist/tokenizer", `${encoding}.json`), "utf8").then(
    async (json) => {
      const { GptEncoding } = await import("gpt-tokenizer/GptEncoding")
      return GptEncoding.getEncodingApi(encoding, () => JSON.parse(json) as RawBytePairRanks)
    },
    () => encoding === "cl100k_base" ? import("gpt-tokenizer/encoding/cl100k_base") : import("gpt-tokenizer/encoding/o200k_base")
  )

/**
 * Counts tokens with the real byte-pair encodings of the provider_a model families (gpt-tokenizer:
 * the same counts as the reference implementation, about ten times faster than js-tiktoken and with
 * half its memory). The rank tables are large, so each is loaded on first use, once, and shared.
 */
export class Tokenizer extends Context.Tag("Tokenizer")<Tokenizer, {
  readonly count: (encoding: Encoding, text: string) => Effect.Effect<number>
}>() {
  static readonly layer = Layer.effect(
    Tokenizer,
    Effect.gen(function*() {
      const load = {
        cl100k_base: yield* Effect.cached(Effect.promise(() => loadEncoding("cl100k_base"))),
        o200k_base: yield* Effect.cached(Effect.promise(() => loadEncoding("o200k_base")))
      }
      // Once loaded, a tokenizer is used directly: going through the cached effect on every request
      // cost more than counting a short prompt.
      const loaded: { -readonly [E in Encoding]?: Counter } = {}
      return {
        count: (encoding, text) => {
          const tokenizer = loaded[encoding]
          return tokenizer !== undefined
            ? Effect.sync(() => tokenizer.countTokens(text))
            : Effect.map(load[encoding], (module) => {
              loaded[encoding] = module
              return module.countTokens(text)
            })
        }
      }
    })
  )
}
