import { Context, Effect, Layer } from "effect"
import { Tiktoken } from "js-tiktoken/lite"

export type Encoding = "cl100k_base" | "o200k_base"

/**
 * Counts tokens with the real byte-pair encodings of the provider_a model families. The rank tables
 * are large, so each is loaded on first use, once, and shared.
 */
export class Tokenizer extends Context.Tag("Tokenizer")<Tokenizer, {
  readonly count: (encoding: Encoding, text: string) => Effect.Effect<number>
}>() {
  static readonly layer = Layer.effect(
    Tokenizer,
    Effect.gen(function*() {
      const load = {
        cl100k_base: yield* Effect.cached(
          Effect.promise(() => import("js-tiktoken/ranks/cl100k_base").then((ranks) => new Tiktoken(ranks.default)))
        ),
        o200k_base: yield* Effect.cached(
          Effect.promise(() => import("js-tiktoken/ranks/o200k_base").then((ranks) => new Tiktoken(ranks.default)))
        )
      }
      return {
        count: (encoding, text) => Effect.map(load[encoding], (tokenizer) => tokenizer.encode(text).length)
      }
    })
  )
}
