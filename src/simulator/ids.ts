// Identifiers shaped like the providers' (unique per response; drawn from Effect's Random, seedable in tests).
import { Effect, Random } from "effect"

const alphabets = {
  hex: "0123456789abcdef",
  base62: "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
} as const

export const randomId = (prefix: string, length: number, alphabet: keyof typeof alphabets = "base62"): Effect.Effect<string> =>
  Effect.gen(function* () {
    const letters = alphabets[alphabet]
    let id = prefix
    for (let i = 0; i < length; i++) id += letters[yield* Random.nextIntBetween(0, letters.length)]
    return id
  })
