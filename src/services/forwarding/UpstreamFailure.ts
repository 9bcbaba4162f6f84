import { Data } from "effect"

/** Why an upstream exchange failed. `detail` is for logs only: no body ever shows it. */
export class UpstreamFailure extends Data.TaggedError("UpstreamFailure")<{
  /** overloaded: the service itself holds too many upstream answers at once (UPSTREAM_JSON_BUDGET_BYTES). */
  readonly kind: "timeout" | "unreachable" | "malformed" | "overloaded"
  readonly detail: string
}> {}
