// Cheap bounds checked before expensive work (decoding, tokenizing): a request that cannot fit its
// model's context is refused on a count, not after its every message has been decoded and counted.
import { findModel, MODEL_CATALOG, type ModelFamily, type ProviderId } from "./models"
import type { Problem } from "./problem"

/**
 * Tokens every message costs at least, whatever its content: the role and the framing the
 * providers add around each message (three tokens in the chat format's own accounting).
 */
export const minTokensPerMessage = 3

/** The largest context of the catalog: the bound of a model outside it (a workspace's own). */
const largestContext = Math.max(...MODEL_CATALOG.map((model) => model.contextLength))

/**
 * A 400 naming `messages` when the request holds more messages than its model's context can take
 * at their minimum cost; undefined when the count fits (or there is no message list to count).
 * Reads the raw body, before any decoding: only `model` and the length of `messages`.
 */
export const messageCountProblem = (provider: ProviderId, family: ModelFamily, body: unknown): Problem | undefined => {
  if (typeof body !== "object" || body === null) return undefined
  const { messages, model } = body as { readonly messages?: unknown; readonly model?: unknown }
  if (!Array.isArray(messages)) return undefined
  const context = (typeof model === "string" ? findModel(provider, family, model)?.contextLength : undefined) ?? largestContext
  const least = messages.length * minTokensPerMessage
  if (least <= context) return undefined
  return {
    status: 400,
    code: "context_length_exceeded",
    message: `messages: ${messages.length} messages need at least ${least} tokens, more than the model's context of ${context} tokens.`,
    param: "messages"
  }
}

/** Text longer than this is counted in slices, the event loop served between them. */
export const sliceChars = 32 * 1024

/**
 * The text cut into slices of about sliceChars, each ending after a line break or a space where
 * there is one near the cut, so that few tokens straddle a cut (counts per slice add up to the
 * whole's within a token or so a slice).
 */
export const textSlices = (text: string, size = sliceChars): ReadonlyArray<string> => {
  const slices: Array<string> = []
  let start = 0
  while (text.length - start > size) {
    let end = start + size
    // A line break in the slice's second half, else a space there, else a hard cut.
    const line = text.lastIndexOf("\n", end - 1)
    const breakAt = line > start + size / 2 ? line : text.lastIndexOf(" ", end - 1)
    if (breakAt > start + size / 2) end = breakAt + 1
    slices.push(text.slice(start, end))
    start = end
  }
  slices.push(text.slice(start))
  return slices
}
