import { Schema } from "effect"
import { errorStatuses, statusVariants, type StatusVariants } from "./statusVariants"
import type { Problem } from "../domain/problem"

/**
 * The fields of every provider's typed error: the problem itself. How it looks on the wire is the
 * provider's `errorBody`, so the body HttpApi encodes and the body the forwarding lane writes
 * directly are one function's output by construction.
 */
export const problemFields = {
  status: Schema.Number,
  code: Schema.String,
  message: Schema.String,
  param: Schema.optional(Schema.String)
}

/**
 * The error schemas HttpApi needs for one provider (one variant per status, see statusVariants):
 * encoded through the provider's `errorBody`, decoded back into a problem by `fromWire`. `at` gives
 * some statuses (what an operation declares it answers); `all` every status, as upstream refusals
 * pass through with theirs.
 */
export const providerErrorSchemas = <Self extends Problem, I, Wire, WireI>(
  errorClass: Schema.Schema<Self, I, never> & (new(problem: Problem) => Self),
  wire: Schema.Schema<Wire, WireI, never>,
  errorBody: (problem: Problem) => Wire,
  fromWire: (body: Wire) => Omit<Problem, "status">
): { readonly at: StatusVariants<Self, WireI>; readonly all: Schema.Schema<Self, WireI, never> } => {
  const at = statusVariants(errorClass, wire, errorBody, (body, status) => new errorClass({ status, ...fromWire(body) }))
  return { at, all: at(...errorStatuses) }
}
