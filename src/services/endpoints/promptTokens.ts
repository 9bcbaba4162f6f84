import { Effect } from "effect"
import type { ModelInfo } from "../../domain/models"
import { PromptTooLong } from "../../domain/refusals"
import { cannotFit } from "../../domain/requestBounds"
import { countedAtOnce, countTextParts } from "../forwarding/tokenCounting"
import type { Tokenizer } from "../forwarding/Tokenizer"

/** About four characters a token: what a stream cut before its usage chunk is billed for its prompt. */
export const estimateTokens = (value: unknown): number => Math.ceil(JSON.stringify(value ?? "").length / 4)

/**
 * Tokens a part's JSON form may cost beyond the model's own framing of a message (`{"role":"user","content":…}`
 * against its three tokens a message): a prompt is refused for its count only when it is over the context by
 * more than this much a part, so that the JSON form never refuses what the provider would take.
 */
export const jsonTokensPerPart = 16

/**
 * A chat model's prompt tokens, its parts (messages or input items, tool definitions) counted with the model
 * family's real encoding (models outside the catalog are estimated), or the refusal naming `field` of a prompt that
 * cannot fit the model's context: on its length alone before any counting, else on its count, which stops once it
 * is past the context. Chat completions and the Responses API count alike. What the check makes of the count
 * (`callOf`) is made in the same step: a short prompt with its table loaded is then counted with no step of its own.
 */
export const countPromptParts = <A>(
  tokenizer: Tokenizer["Type"],
  parts: ReadonlyArray<string>,
  model: ModelInfo | undefined,
  field: string,
  callOf: (promptTokens: number) => A
): Effect.Effect<A, PromptTooLong> => {
  const encoding = model?.tokenizer ?? "estimate"
  if (encoding === "estimate") return Effect.succeed(callOf(estimateTokens(parts.join("\n"))))
  const contextLength = model?.contextLength ?? Number.POSITIVE_INFINITY
  const chars = parts.reduce((sum, part) => sum + part.length, 0)
  if (cannotFit(chars, contextLength)) {
    return Effect.fail(new PromptTooLong({ field, found: "length", amount: chars, contextLength }))
  }
  const allowance = jsonTokensPerPart * parts.length
  const verdict = (tokens: number): Effect.Effect<A, PromptTooLong> =>
    tokens - allowance > contextLength
      ? Effect.fail(new PromptTooLong({ field, found: "tokens", amount: tokens - allowance, contextLength }))
      : Effect.succeed(callOf(tokens))
  const counted = countedAtOnce(tokenizer, encoding, parts)
  return counted !== undefined ? verdict(counted) : Effect.flatMap(countTextParts(tokenizer, encoding, parts, contextLength + allowance), verdict)
}
