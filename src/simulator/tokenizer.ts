// Token counting for simulated usage figures: exact (BPE ranks shipped in gpt-tokenizer) or a fast estimate.
import { Context, Effect, Layer } from "effect"

export interface TokenCounter {
  readonly count: (text: string) => number
}

// The pre-tokenizer pattern of BPE tokenizers: contractions, words with their leading space, short digit
// groups, punctuation runs and whitespace.
const pieceRegex = /'(?:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu

/** Splits text into word-like pieces whose concatenation is the text again. */
export const splitPieces = (text: string): Array<string> => text.match(pieceRegex) ?? []

const estimateTokens = (text: string): number => {
  let total = 0
  for (const piece of splitPieces(text)) {
    const trimmed = piece.trim()
    // Letters outside Latin scripts are roughly one token each; Latin words ~6 characters a token.
    total += /[^\u0000-\u024f]/u.test(trimmed) ? Math.max(1, trimmed.length) : Math.max(1, Math.ceil(trimmed.length / 6))
  }
  return total
}

export class SimulatorTokenizer extends Context.Tag("simulator/SimulatorTokenizer")<SimulatorTokenizer, TokenCounter>() {
  /** Exact counts with the o200k_base ranks; loading them costs a fraction of a second and ~50 MB. */
  static readonly exact: Layer.Layer<SimulatorTokenizer> = Layer.effect(
    SimulatorTokenizer,
    Effect.promise(() => import("gpt-tokenizer/encoding/o200k_base")).pipe(
      Effect.map((encoding) => SimulatorTokenizer.of({ count: (text) => (text.length === 0 ? 0 : encoding.countTokens(text)) }))
    )
  )

  /** Instant estimate from the same pre-tokenization: one token per word-like piece, more for long ones. */
  static readonly approximate: Layer.Layer<SimulatorTokenizer> = Layer.succeed(
    SimulatorTokenizer,
    SimulatorTokenizer.of({ count: estimateTokens })
  )
}

