import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/** Statuses any of our error formats may answer with (upstream 4xx pass through; 529 is provider_b's "overloaded"). */
export const errorStatuses = [
  400, 401, 402, 403, 404, 405, 408, 409, 410, 412, 413, 415, 422, 424, 429, 451, 500, 501, 502, 503, 504, 529
] as const

const declared: ReadonlySet<number> = new Set(errorStatuses)

/** A status we can answer with: itself when declared, else the nearest general one (400 or 502). */
export const answerableStatus = (status: number): number =>
  declared.has(status) ? status : status >= 400 && status < 500 ? 400 : 502
export type ErrorStatus = (typeof errorStatuses)[number]

/**
 * HttpApi encodes errors through one union of schemas and takes the status from the member's
 * annotation. An error class that carries its status is therefore declared once per status:
 * each variant maps the class to its exact wire body and only matches errors of that status.
 * The result is one union; HttpApi splits it into its members, each with its own status.
 */
export const statusVariants = <Self extends { readonly status: number }, I, Wire, WireI>(
  errorClass: Schema.Schema<Self, I, never>,
  wire: Schema.Schema<Wire, WireI, never>,
  toWire: (error: Self) => Wire,
  fromWire: (body: Wire, status: ErrorStatus) => Self,
  statuses: ReadonlyArray<ErrorStatus> = errorStatuses
) =>
  Schema.Union(...statuses.map((status) =>
    Schema.transform(wire, Schema.typeSchema(errorClass).pipe(Schema.filter((e) => e.status === status)), {
      strict: true,
      decode: (body) => fromWire(body, status),
      encode: (error) => toWire(error)
    }).annotations(HttpApiSchema.annotations({ status }))
  ))
