import { Effect } from "effect"
import { sliceChars, textSlices } from "../domain/requestBounds"
import { yieldToEventLoop } from "./eventLoopTurn"
import type { Encoding, Tokenizer } from "./Tokenizer"

/**
 * Counts a text with the tokenizer, a slice at a time for long texts (about a millisecond each),
 * yielding to the event loop between slices: one request's megabytes of prompt never stall every
 * other request for the whole count. Stops early, with the count so far, once it passes `stopAbove`
 * (a caller that refuses beyond a limit need not count the rest). Short texts: one plain count.
 */
export const countTokens = (
  tokenizer: Tokenizer["Type"],
  encoding: Encoding,
  text: string,
  stopAbove = Number.POSITIVE_INFINITY
): Effect.Effect<number> => {
  if (text.length <= sliceChars) return tokenizer.count(encoding, text)
  const slices = textSlices(text)
  const loop = (index: number, total: number): Effect.Effect<number> =>
    index >= slices.length || total > stopAbove
      ? Effect.succeed(total)
      : Effect.flatMap(tokenizer.count(encoding, slices[index]!), (tokens) =>
        Effect.zipRight(yieldToEventLoop, loop(index + 1, total + tokens)))
  return loop(0, 0)
}
