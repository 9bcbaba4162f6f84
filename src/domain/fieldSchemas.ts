/**
 * Building blocks shared by the request schemas of the forwarded endpoints (src/providers/) and of the
 * service's own API (src/api/schemas/).
 *
 * Every refinement carries a `message` naming the wire field, so that a failed decode can be
 * answered in the provider's own error format with a sentence a client developer understands.
 */
import { Schema } from "effect"
import type { ParseResult } from "effect"

/**
 * PostgreSQL's text cannot hold a NUL character: a string that will be stored is refused with a
 * 400 naming its field, rather than failing at the database (a 503 that clients retry forever).
 */
export const withoutNul = (what: string) => <A extends string, I, R>(self: Schema.Schema<A, I, R>) =>
  self.pipe(Schema.filter((text) => !text.includes("\u0000"), { message: () => `${what} must not contain a NUL character` }))

/** Short rendering of an offending value for error messages (long values are cut). */
export const describeValue = (value: unknown): string => {
  const text = value === undefined ? "undefined" : JSON.stringify(value) ?? String(value)
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

const actualOf = (issue: ParseResult.ParseIssue): string => describeValue(issue.actual)

/**
 * Optional request parameter. `null` is accepted and treated as absent, as the providers do
 * (the client libraries type most optional parameters as `T | null`).
 */
export const optionalParam = <S extends Schema.Schema.All>(schema: S) =>
  Schema.optionalWith(schema, { exact: true, nullable: true })

/** A number in [minimum, maximum]; the same message covers a wrong type and a value out of range. */
export const numberBetween = (field: string, minimum: number, maximum: number) => {
  const message = (issue: ParseResult.ParseIssue) =>
    `${field} must be a number between ${minimum} and ${maximum}, got ${actualOf(issue)}.`
  return Schema.Number.annotations({ message }).pipe(Schema.between(minimum, maximum, { message }))
}

/** An integer, any value. */
export const integer = (field: string) => {
  const message = (issue: ParseResult.ParseIssue) => `${field} must be an integer, got ${actualOf(issue)}.`
  return Schema.Number.annotations({ message }).pipe(Schema.int({ message }))
}

/** An integer >= minimum. */
export const integerAtLeast = (field: string, minimum: number) => {
  const message = (issue: ParseResult.ParseIssue) =>
    `${field} must be an integer greater than or equal to ${minimum}, got ${actualOf(issue)}.`
  return Schema.Number.annotations({ message }).pipe(
    Schema.int({ message }),
    Schema.greaterThanOrEqualTo(minimum, { message })
  )
}

/** An integer in [minimum, maximum]. */
export const integerBetween = (field: string, minimum: number, maximum: number) => {
  const message = (issue: ParseResult.ParseIssue) =>
    `${field} must be an integer between ${minimum} and ${maximum}, got ${actualOf(issue)}.`
  return Schema.Number.annotations({ message }).pipe(
    Schema.int({ message }),
    Schema.between(minimum, maximum, { message })
  )
}

/** A string of at least one character. */
export const nonEmptyString = (field: string) => {
  const message = (issue: ParseResult.ParseIssue) => `${field} must be a non-empty string, got ${actualOf(issue)}.`
  return Schema.String.annotations({ message }).pipe(Schema.minLength(1, { message }))
}

/** A string. */
export const string = (field: string) =>
  Schema.String.annotations({
    message: (issue) => `${field} must be a string, got ${actualOf(issue)}.`
  })

/** A boolean. */
export const boolean = (field: string) =>
  Schema.Boolean.annotations({
    message: (issue) => `${field} must be a boolean, got ${actualOf(issue)}.`
  })

/**
 * A JSON object (not an array, not null), e.g. a JSON Schema. Its members are kept as they are,
 * because they are forwarded to the provider untouched.
 */
export const jsonObject = (field: string) => {
  const message = (issue: ParseResult.ParseIssue) => `${field} must be a JSON object, got ${actualOf(issue)}.`
  return Schema.Record({ key: Schema.String, value: Schema.Unknown })
    .annotations({ message })
    .pipe(Schema.filter((value) => !Array.isArray(value), { message }))
}

/** A string or an array of strings, at most `maxItems` of them when given (stop sequences). */
export const stringOrStrings = (field: string, maxItems?: number) => {
  const message = (issue: ParseResult.ParseIssue) =>
    `${field} must be a string or an array of ${maxItems === undefined ? "" : `at most ${maxItems} `}strings, got ${
      actualOf(issue)
    }.`
  const strings = Schema.Array(Schema.String)
  return Schema.Union(
    Schema.String,
    maxItems === undefined ? strings : strings.pipe(Schema.maxItems(maxItems))
  ).annotations({ message: (issue) => ({ message: message(issue), override: true }) })
}

/** Literal values with a message listing them. */
export const oneOf = <const L extends ReadonlyArray<string>>(field: string, ...values: L) =>
  Schema.Literal(...values).annotations({
    message: (issue) => ({
      message: `${field} must be one of ${values.join(", ")}, got ${actualOf(issue)}.`,
      override: true
    })
  })
