import { Effect } from "effect"
import { sliceChars, sliceEnd } from "../../domain/requestBounds"
import { yieldToEventLoop } from "../../platform/eventLoopTurn"
import type { Encoding, Tokenizer } from "./Tokenizer"

/**
 * Counts a text with the tokenizer, a slice at a time for long texts (a few milliseconds each at most),
 * yielding to the event loop between slices: one request's megabytes of prompt never stall every
 * other request for the whole count. Stops early, with the count so far, once it passes `stopAbove`
 * (a caller that refuses beyond a limit need not count the rest). Short texts: one plain count.
 */
export const countTokens = (
  tokenizer: Tokenizer["Type"],
  encoding: Encoding,
  text: string,
  stopAbove = Number.POSITIVE_INFINITY
): Effect.Effect<number> => countTextParts(tokenizer, encoding, [text], stopAbove)

/**
 * The tokens of a text made of parts (a prompt's messages, its tools) joined by line breaks. A short whole is
 * joined and counted at once, exactly; a long one is counted a slice at a time with turns of the event loop
 * between them: short parts joined into slices of about sliceChars, long ones cut, the whole never joined (a
 * prompt of megabytes is not copied once more); a line break between two slices of different parts is counted
 * as a token. Stops past `stopAbove` as countTokens does.
 */
export const countTextParts = (
  tokenizer: Tokenizer["Type"],
  encoding: Encoding,
  parts: ReadonlyArray<string>,
  stopAbove = Number.POSITIVE_INFINITY
): Effect.Effect<number> => {
  const chars = joinedLength(parts)
  if (chars <= sliceChars) return tokenizer.count(encoding, parts.join("\n"))
  const slices = slicesOf(parts)
  const loop = (total: number): Effect.Effect<number> => {
    const next = total > stopAbove ? undefined : slices.next()
    return next === undefined || next.done === true
      ? Effect.succeed(total)
      : Effect.flatMap(tokenizer.count(encoding, next.value.text), (tokens) =>
        Effect.zipRight(yieldToEventLoop, loop(total + tokens + next.value.breaks)))
  }
  return loop(0)
}

/** The length of the parts joined by line breaks. */
const joinedLength = (parts: ReadonlyArray<string>): number => parts.reduce((sum, part) => sum + part.length, parts.length - 1)

/**
 * The tokens of parts as countTextParts counts them, when that needs no step: a short whole, the encoding's table
 * loaded (the common case). Undefined otherwise (a table to load, a long text counted in slices): countTextParts.
 */
export const countedAtOnce = (tokenizer: Tokenizer["Type"], encoding: Encoding, parts: ReadonlyArray<string>): number | undefined => {
  if (joinedLength(parts) > sliceChars) return undefined
  return tokenizer.ready(encoding)?.count(parts.join("\n"))
}

/**
 * Slices of about sliceChars over the parts, cut as they are counted (a count that stops early cuts no
 * further), each with the line breaks between parts that fall before it and outside any slice.
 */
function* slicesOf(parts: ReadonlyArray<string>): Generator<{ readonly text: string; readonly breaks: number }> {
  let joined: string | undefined
  let breaks = 0
  for (const part of parts) {
    if (joined !== undefined && joined.length + part.length < sliceChars) {
      joined += `\n${part}`
      continue
    }
    if (joined !== undefined) {
      yield { text: joined, breaks }
      breaks = 1
      joined = undefined
    }
    if (part.length < sliceChars) {
      joined = part
      continue
    }
    for (let start = 0; start < part.length;) {
      const end = sliceEnd(part, start)
      yield { text: part.slice(start, end), breaks }
      breaks = 0
      start = end
    }
    breaks = 1
  }
  if (joined !== undefined) yield { text: joined, breaks }
}
