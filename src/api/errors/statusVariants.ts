import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { errorStatuses, type ErrorStatus } from "../../domain/problem"

export { answerableStatus, errorStatuses, type ErrorStatus } from "../../domain/problem"

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
