import { Data } from "effect"

/** Why an upstream exchange failed. `detail` is for logs only: no body ever shows it. */
export class UpstreamFailure extends Data.TaggedError("UpstreamFailure")<{
  /** overloaded: the service itself holds too many upstream answers at once (UPSTREAM_JSON_BUDGET_BYTES). */
  readonly kind: "timeout" | "unreachable" | "malformed" | "overloaded"
  readonly detail: string
}> {}

/** A socket error's code in undici's or Node's message (`ECONNREFUSED`, `UND_ERR_SOCKET`): all of it that is safe to show. */
const errorCode = /\b(E[A-Z]{3,}|UND_ERR_[A-Z_]+)\b/

/**
 * The failure as the operator reads it (GET /admin/upstreams, the console): never `detail` of a timeout or a
 * connection error, whose messages name the upstream's address; only its error code. A malformed answer's
 * detail is the service's own description.
 */
export const operatorWords = (failure: UpstreamFailure): string => {
  switch (failure.kind) {
    case "timeout":
      return "timeout: no answer in time"
    case "unreachable":
      return `unreachable: ${errorCode.exec(failure.detail)?.[1] ?? "the connection failed"}`
    case "malformed":
      return `malformed: ${failure.detail}`
    case "overloaded":
      return "overloaded: this instance holds too many upstream answers"
  }
}
