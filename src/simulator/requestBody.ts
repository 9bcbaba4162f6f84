// Turns a raw request body into a typed request, or into the error a provider would answer with.
import { Either, ParseResult, Schema } from "effect"
import { type ErrorKind, SimulatorError } from "./simulatorError"

/** Parses JSON; a body that is not a JSON object is an invalid request. */
export const parseJsonObject = (raw: string): Either.Either<Record<string, unknown>, SimulatorError> => {
  const parsed = Either.try(() => JSON.parse(raw) as unknown)
  if (Either.isRight(parsed) && typeof parsed.right === "object" && parsed.right !== null && !Array.isArray(parsed.right)) {
    return Either.right(parsed.right as Record<string, unknown>)
  }
  return Either.left(
    new SimulatorError({
      kind: "invalid_request",
      message: Either.isLeft(parsed) ? "The request body is not valid JSON." : "The request body must be a JSON object.",
      code: "invalid_json"
    })
  )
}

/** Decodes with `schema`; the first issue becomes the error, naming the offending field. */
export const decodeRequest = <A, I>(
  schema: Schema.Schema<A, I>,
  body: unknown,
  kind: ErrorKind = "invalid_request"
): Either.Either<A, SimulatorError> =>
  Schema.decodeUnknownEither(schema, { errors: "first" })(body).pipe(
    Either.mapLeft((error) => {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
      return new SimulatorError({
        kind,
        message: issue?.message ?? "Invalid request body.",
        path: (issue?.path ?? []).map((segment) => (typeof segment === "number" ? segment : String(segment))),
        code: issue?._tag === "Missing" ? "missing_required_parameter" : "invalid_value"
      })
    })
  )

/** The providers reject top-level parameters they do not know. */
export const rejectUnknownFields = (
  body: Record<string, unknown>,
  known: ReadonlySet<string>,
  message: (field: string) => string,
  kind: ErrorKind = "invalid_request"
): Either.Either<void, SimulatorError> => {
  const unknown = Object.keys(body).find((field) => !known.has(field))
  return unknown === undefined
    ? Either.void
    : Either.left(new SimulatorError({ kind, message: message(unknown), path: [unknown], code: "unknown_parameter" }))
}
