/** A failure described once, independent of format. */
export interface Problem {
  readonly status: number
  /** Machine-readable code, e.g. invalid_request, not_found, rate_limited. */
  readonly code: string
  readonly message: string
  /** The offending request field in wire notation (messages[0].role), when there is one. */
  readonly param?: string | undefined
}

/** Statuses any of our error formats may answer with (upstream 4xx pass through; 529 is provider_b's "overloaded"). */
export const errorStatuses = [
  400, 401, 402, 403, 404, 405, 408, 409, 410, 412, 413, 415, 422, 424, 429, 451, 500, 501, 502, 503, 504, 529
] as const

export type ErrorStatus = (typeof errorStatuses)[number]

const declared: ReadonlySet<number> = new Set(errorStatuses)

export const isErrorStatus = (status: number): status is ErrorStatus => declared.has(status)

/** A status we can answer with: itself when declared, else the nearest general one (400 or 502). */
export const answerableStatus = (status: number): number =>
  declared.has(status) ? status : status >= 400 && status < 500 ? 400 : 502
