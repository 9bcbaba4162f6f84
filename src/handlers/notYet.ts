import { Effect } from "effect"
import { type ErrorFormat, problemAs } from "../http/errorFormat"

/** Endpoints whose issue has not landed yet answer 501 in their own format. */
export const notImplemented = <F extends ErrorFormat>(format: F, what: string) =>
  Effect.fail(problemAs(format, { status: 501, code: "not_implemented", message: `${what} is not available yet.` }))
