// Cheap bounds checked before expensive work (decoding, tokenizing): a request that cannot fit its
// model's context is refused on a count, not after its every message has been decoded and counted.
import type { Catalog, ModelFamily } from "./models"
import type { ProviderId } from "./providerId"
import { TooManyMessages } from "./refusals"

/**
 * Tokens every message costs at least, whatever its content: the role and the framing the
 * providers add around each message (three tokens in the chat format's own accounting).
 */
export const minTokensPerMessage = 3

/**
 * The most bytes one token holds in the published encodings (o200k_base and cl100k_base: 128; a test checks the
 * tables). A text of more bytes than its model's context times this cannot fit, whatever its words: it is refused
 * on its length alone, before any tokenizing. The same bound serves the models whose tokenizer is not published.
 */
export const maxTokenBytes = 128

/**
 * A refusal naming `messages` when the request holds more messages than its model's context can
 * take at their minimum cost; undefined when the count fits (or there is no message list to count).
 * Reads the raw body, before any decoding: only `model` and the length of `messages`.
 */
export const tooManyMessages = (catalog: Catalog, provider: ProviderId, family: ModelFamily, body: unknown): TooManyMessages | undefined => {
  if (typeof body !== "object" || body === null) return undefined
  const { messages, model } = body as { readonly messages?: unknown; readonly model?: unknown }
  if (!Array.isArray(messages)) return undefined
  const context = (typeof model === "string" ? catalog.find(provider, family, model)?.contextLength : undefined) ?? catalog.largestContext
  const least = messages.length * minTokensPerMessage
  if (least <= context) return undefined
  return new TooManyMessages({ counted: "exactly", messages: messages.length, leastTokens: least, contextLength: context })
}

/** Whether a text of `chars` characters (at least as many bytes) is too long for any count to fit `contextLength` tokens. */
export const cannotFit = (chars: number, contextLength: number): boolean => chars > contextLength * maxTokenBytes

/**
 * A large request body: parsing, decoding and counting it takes milliseconds to tens of them and its size
 * several times over in memory. Such bodies are scanned for their message count before they are parsed, and
 * read a few at a time (LargeBodies).
 */
export const largeBodyBytes = 1024 * 1024

/** Bodies larger than this are scanned for their message count before they are parsed. */
export const scanBodiesOver = largeBodyBytes

/**
 * Large bodies per instance: let in at once (received, waiting their turn, or processed) at most
 * `reading + waiting`, and from one workspace at most `perWorkspace`, each refused before it is read beyond
 * that (503 for the instance, 429 for the workspace: retry shortly); of those, `reading` processed (parsed,
 * decoded, checked and counted) at once. The heap of `npm start` (192 MB) holds two 10 MB bodies in every form
 * they take while processed, and eight received ones are 80 MB of buffers at most (bench/RESULTS.md,
 * "Large request bodies").
 */
export const largeBodyLimits = { reading: 2, waiting: 6, perWorkspace: 4 } as const

const roleKey = Buffer.from('"role"')
const modelKey = Buffer.from('"model"')
const modelValue = /^"model"\s*:\s*"([^"\\]{1,200})"/

/**
 * The largest context of the models a raw body names: every `"model": "<id>"` found (the request's
 * own among them, wherever it sits), up to eight; the largest context of all when one is unknown or
 * there are more. Never smaller than the context of the model the request asks for.
 */
const rawContext = (catalog: Catalog, provider: ProviderId, family: ModelFamily, body: Buffer): number => {
  let context = 0
  let found = 0
  for (let at = body.indexOf(modelKey); at !== -1; at = body.indexOf(modelKey, at + modelKey.length)) {
    if (++found > 8) return catalog.largestContext
    const id = modelValue.exec(body.toString("utf8", at, at + 260))?.[1]
    const known = id === undefined ? undefined : catalog.find(provider, family, id)?.contextLength
    if (known === undefined) return catalog.largestContext
    context = Math.max(context, known)
  }
  return found === 0 ? catalog.largestContext : context
}

/**
 * The same bound read from the raw bytes of a large body, before it is parsed: every message has a
 * `"role"` key, and that text (quotes unescaped) cannot occur inside a JSON string, so the count of
 * its occurrences is at least the number of messages (more only with such keys or values elsewhere,
 * which would take tens of thousands of them to matter). The context is the model's as far as the
 * raw body tells it (rawContext); the exact check follows parsing.
 */
export const tooManyRawMessages = (catalog: Catalog, provider: ProviderId, family: ModelFamily, body: Buffer): TooManyMessages | undefined => {
  const context = rawContext(catalog, provider, family, body)
  const most = Math.floor(context / minTokensPerMessage)
  let count = 0
  for (let at = body.indexOf(roleKey); at !== -1 && count <= most; at = body.indexOf(roleKey, at + roleKey.length)) count += 1
  if (count <= most) return undefined
  return new TooManyMessages({ counted: "more than", messages: most, leastTokens: most * minTokensPerMessage, contextLength: context })
}

/** Text longer than this is counted in slices, the event loop served between them. */
export const sliceChars = 32 * 1024

/**
 * Where the slice of `text` that starts at `start` ends: about `size` characters on, after a line break in
 * the slice's second half when there is one, else after a space there, else at `size` (a hard cut). Only
 * that half is searched: a text without breaks costs no more to cut than one with them.
 */
export const sliceEnd = (text: string, start: number, size = sliceChars): number => {
  if (text.length - start <= size) return text.length
  const half = start + size / 2
  const window = text.substring(half, start + size)
  const line = window.lastIndexOf("\n")
  const at = line !== -1 ? line : window.lastIndexOf(" ")
  return at === -1 ? start + size : half + at + 1
}

/**
 * The text cut into slices of about sliceChars (sliceEnd), so that few tokens straddle a cut (counts per
 * slice add up to the whole's within a token or so a slice).
 */
export const textSlices = (text: string, size = sliceChars): ReadonlyArray<string> => {
  const slices: Array<string> = []
  for (let start = 0; start < text.length || slices.length === 0; ) {
    const end = sliceEnd(text, start, size)
    slices.push(text.slice(start, end))
    start = end
  }
  return slices
}
