// Simulated model output: prose, code and echoes, cut by stop sequences and token limits like a real model.
import type { Random } from "./deterministic"
import { splitPieces, type TokenCounter } from "./tokenizer"

// Short, common words: each is a single token with its leading space, so a target length in tokens is met exactly.
const words = [
  "the", "model", "data", "signal", "answer", "river", "light", "stone", "value", "time", "system", "method", "result",
  "plan", "code", "field", "shape", "line", "point", "layer", "state", "event", "order", "level", "place", "group",
  "quick", "clear", "small", "large", "early", "simple", "strong", "open", "stable", "exact", "local", "final",
  "keeps", "moves", "shows", "finds", "builds", "reads", "holds", "turns", "makes", "takes", "gives", "sends",
  "and", "with", "from", "into", "over", "under", "after", "before", "about", "while", "each", "every", "this",
  "that", "some", "many", "more", "most", "also", "then", "still", "often", "here", "there", "well", "much"
] as const satisfies readonly [string, ...Array<string>]

const capitalize = (word: string) => word.charAt(0).toUpperCase() + word.slice(1)

/** English-looking sentences of `tokens` tokens (words and full stops). */
export const generateProse = (random: Random, tokens: number): string => {
  let text = ""
  let produced = 0
  while (produced < tokens) {
    const sentenceLength = Math.min(random.int(5, 14), tokens - produced)
    for (let i = 0; i < sentenceLength; i++) {
      const word = random.pick(words)
      // The last token of a sentence is its full stop.
      if (i === sentenceLength - 1 && sentenceLength > 1) {
        text += "."
      } else {
        text += `${text.length === 0 ? "" : " "}${i === 0 ? capitalize(word) : word}`
      }
      produced++
    }
  }
  return text
}

const fallbackIdentifiers = ["value", "result", "items", "index", "count", "total"] as const satisfies readonly [
  string,
  ...Array<string>
]
const keywords = new Set([
  "def", "return", "if", "else", "for", "while", "const", "let", "var", "function", "class", "import", "from",
  "export", "in", "of", "and", "or", "not", "true", "false", "null", "None", "True", "False", "self", "this", "new"
])

const identifiersIn = (source: string): readonly [string, ...Array<string>] => {
  const found = [...new Set(source.match(/[A-Za-z_][A-Za-z0-9_]{2,}/g) ?? [])].filter((name) => !keywords.has(name))
  const [first, ...rest] = found
  return first === undefined ? fallbackIdentifiers : [first, ...rest]
}

/** Code-looking lines that continue `prompt` at its indentation, using identifiers it already has. */
export const generateCode = (random: Random, context: { readonly prompt: string; readonly suffix: string }, tokens: number): string => {
  const names = identifiersIn(`${context.prompt}\n${context.suffix}`)
  const lastLine = context.prompt.slice(context.prompt.lastIndexOf("\n") + 1)
  const baseIndent = /^\s*/.exec(lastLine)?.[0] ?? ""
  const atLineStart = lastLine.trim().length === 0
  const opensBlock = /[:{(]\s*$/.test(lastLine)
  const indent = atLineStart ? lastLine : opensBlock ? `${baseIndent}    ` : baseIndent
  const templates = [
    () => `${random.pick(names)} = ${random.pick(names)}(${random.pick(names)})`,
    () => `${random.pick(names)}.append(${random.pick(names)})`,
    () => `if ${random.pick(names)} is None:\n${indent}    return ${random.pick(names)}`,
    () => `for ${random.pick(names)} in ${random.pick(names)}:\n${indent}    ${random.pick(names)} += 1`,
    () => `return ${random.pick(names)}`
  ] as const satisfies readonly [() => string, ...Array<() => string>]
  // The cursor may sit at an indentation, after a block opener, or in the middle of a line.
  let text = atLineStart ? "" : opensBlock ? `\n${indent}` : `(${random.pick(names)})\n${indent}`
  let estimate = 0
  while (estimate < tokens) {
    const line = random.pick(templates)()
    text += `${line}\n${indent}`
    estimate += splitPieces(line).length + 1
  }
  return text.trimEnd() + "\n"
}

export interface TokenPiece {
  readonly text: string
  readonly tokens: number
}

export type StopCause = "natural" | "stop_sequence" | "max_tokens"

export interface ShapedOutput {
  readonly pieces: ReadonlyArray<TokenPiece>
  readonly text: string
  readonly tokens: number
  readonly stoppedBy: StopCause
  /** The stop sequence that ended the output, when stoppedBy is "stop_sequence". */
  readonly stopSequence: string | null
}

/** Cuts output at the first stop sequence (which is not part of the output) and then at the token limit. */
export const shapeOutput = (
  text: string,
  counter: TokenCounter,
  limits: { readonly maxTokens?: number | undefined; readonly stop?: ReadonlyArray<string> | undefined }
): ShapedOutput => {
  let cut = text
  let stoppedBy: StopCause = "natural"
  let stopSequence: string | null = null
  for (const candidate of limits.stop ?? []) {
    if (candidate.length === 0) continue
    const at = cut.indexOf(candidate)
    if (at >= 0) {
      cut = cut.slice(0, at)
      stoppedBy = "stop_sequence"
      stopSequence = candidate
    }
  }
  const pieces: Array<TokenPiece> = []
  let tokens = 0
  for (const piece of splitPieces(cut)) {
    const pieceTokens = counter.count(piece)
    if (limits.maxTokens !== undefined && tokens + pieceTokens > limits.maxTokens) {
      return { pieces, text: pieces.map((p) => p.text).join(""), tokens, stoppedBy: "max_tokens", stopSequence: null }
    }
    pieces.push({ text: piece, tokens: pieceTokens })
    tokens += pieceTokens
  }
  return { pieces, text: cut, tokens, stoppedBy, stopSequence }
}

/** Groups pieces into stream chunks of about `tokensPerChunk` tokens each. */
export const chunkPieces = (pieces: ReadonlyArray<TokenPiece>, tokensPerChunk: number): Array<TokenPiece> => {
  const chunks: Array<TokenPiece> = []
  let text = ""
  let tokens = 0
  for (const piece of pieces) {
    text += piece.text
    tokens += piece.tokens
    if (tokens >= tokensPerChunk) {
      chunks.push({ text, tokens })
      text = ""
      tokens = 0
    }
  }
  if (text.length > 0) chunks.push({ text, tokens })
  return chunks
}
