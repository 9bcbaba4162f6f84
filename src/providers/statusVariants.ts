import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import type { ErrorStatus } from "../domain/problem"

export { answerableStatus, errorStatuses, type ErrorStatus, isErrorStatus } from "../domain/problem"

// In providers/, the lowest layer with error formats: the providers' formats and the service's own
// (src/api/errors/) share it.

/** An error format's schema for some of its statuses: what an operation (or a middleware) declares it answers. */
export type StatusVariants<Self, WireI> = (...statuses: ReadonlyArray<ErrorStatus>) => Schema.Schema<Self, WireI, never>

/**
 * HttpApi encodes errors through one union of schemas and takes the status from the member's
 * annotation. An error class that carries its status is therefore declared once per status:
 * each variant maps the class to its exact wire body and only matches errors of that status.
 * The result is a union of the asked statuses; HttpApi splits it into its members, each with its own status.
 *
 * Each status's variant is built once and shared: operations declare only the statuses they answer,
 * and HttpApi's one error union (a set of these members) stays the same however they are grouped.
 */
export const statusVariants = <Self extends { readonly status: number }, I, Wire, WireI>(
  errorClass: Schema.Schema<Self, I, never>,
  wire: Schema.Schema<Wire, WireI, never>,
  toWire: (error: Self) => Wire,
  fromWire: (body: Wire, status: ErrorStatus) => Self
): StatusVariants<Self, WireI> => {
  const built = new Map<ErrorStatus, Schema.Schema<Self, WireI, never>>()
  const variant = (status: ErrorStatus): Schema.Schema<Self, WireI, never> => {
    const known = built.get(status)
    if (known !== undefined) return known
    const made = Schema.transform(wire, Schema.typeSchema(errorClass).pipe(Schema.filter((e) => e.status === status)), {
      strict: true,
      decode: (body) => fromWire(body, status),
      encode: (error) => toWire(error)
    }).annotations(HttpApiSchema.annotations({ status }))
    built.set(status, made)
    return made
  }
  return (...statuses) => Schema.Union(...statuses.map(variant))
}
