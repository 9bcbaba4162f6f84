// The one failure type of simulated endpoints; each provider dialect renders it in its own error body.
import { Schema } from "effect"

export const ErrorKind = Schema.Literal(
  "invalid_request", // 400
  "unprocessable", // 422: body fields of the wrong shape, where the provider reports them that way
  "authentication", // 401
  "permission", // 403
  "not_found", // 404
  "request_too_large", // 413
  "rate_limit", // 429
  "server_error", // 500
  "overloaded" // 503, or 529 where the provider uses it
)
export type ErrorKind = typeof ErrorKind.Type

export class SimulatorError extends Schema.TaggedError<SimulatorError>()("SimulatorError", {
  kind: ErrorKind,
  message: Schema.String,
  /** The offending request field, as a path (e.g. ["messages", 0, "content"]). */
  path: Schema.optional(Schema.Array(Schema.Union(Schema.String, Schema.Number))),
  /** The provider's machine-readable code, where it has one. */
  code: Schema.optional(Schema.String)
}) {}

/** Joins a field path the way provider_a names parameters: messages[0].content. */
export const bracketPath = (path: ReadonlyArray<string | number>): string =>
  path.reduce<string>(
    (out, segment) => (typeof segment === "number" ? `${out}[${segment}]` : out.length === 0 ? segment : `${out}.${segment}`),
    ""
  )

/** Joins a field path the way provider_b names parameters: messages.0.content. */
export const dottedPath = (path: ReadonlyArray<string | number>): string => path.map(String).join(".")
