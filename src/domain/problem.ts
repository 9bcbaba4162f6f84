/** The error formats of the service: each public route family answers in its client library's format. */
export type ErrorFormat = "export" | "provider_a" | "provider_b" | "provider_c" | "admin"

/** A failure described once, independent of format. */
export interface Problem {
  readonly status: number
  /** Machine-readable code, e.g. invalid_request, not_found, rate_limited. */
  readonly code: string
  readonly message: string
  /** The offending request field in wire notation (messages[0].role), when there is one. */
  readonly param?: string | undefined
}
