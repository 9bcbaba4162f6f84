/** Decode helpers shared by the schema tests. */
import { Either, Schema } from "effect"
import { fromParseError, type ValidationIssue } from "../../../src/domain/validationIssue"

/** The issue a body yields, or "ok" when it decodes. */
export const issueOf = <A, I>(schema: Schema.Schema<A, I>, body: unknown): ValidationIssue | "ok" => {
  const result = Schema.decodeUnknownEither(schema)(body)
  return Either.isLeft(result) ? fromParseError(result.left) : "ok"
}

/** Decodes or throws with the issue, so a failing test shows why. */
export const decodeOrFail = <A, I>(schema: Schema.Schema<A, I>, body: unknown): A => {
  const result = Schema.decodeUnknownEither(schema)(body)
  if (Either.isLeft(result)) {
    throw new Error(`expected the body to decode: ${JSON.stringify(fromParseError(result.left))}`)
  }
  return result.right
}

/** A copy of `body` without `key` (a JSON body never carries undefined). */
export const without = <T extends Record<string, unknown>>(body: T, key: keyof T): Record<string, unknown> =>
  Object.fromEntries(Object.entries(body).filter(([name]) => name !== key))

export interface BadCase {
  readonly name: string
  readonly body: Record<string, unknown>
  readonly param: string | null
  readonly message: string
}
