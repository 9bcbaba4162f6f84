/** OTEL_TRACES_SAMPLER and its argument (the ratio of the traceidratio samplers). */
export type TraceSampler =
  | { readonly kind: "always_on" | "always_off" | "parentbased_always_on" | "parentbased_always_off" }
  | { readonly kind: "traceidratio" | "parentbased_traceidratio"; readonly ratio: number }

/** A span as W3C trace context names it: what a `traceparent` header carries. */
export interface TraceParent {
  readonly traceId: string
  readonly spanId: string
  readonly sampled: boolean
}

const traceparentFormat = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
const allZeros = /^0+$/

/** A caller's `traceparent` (W3C Trace Context, version 00 and later); undefined when missing or malformed. */
export const parseTraceparent = (header: string | ReadonlyArray<string> | undefined): TraceParent | undefined => {
  if (typeof header !== "string") return undefined
  const match = traceparentFormat.exec(header.trim().toLowerCase())
  if (match === null) return undefined
  const [, version, traceId, spanId, flags] = match as unknown as [string, string, string, string, string]
  if (version === "ff" || allZeros.test(traceId) || allZeros.test(spanId)) return undefined
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 }
}

/** The `traceparent` header naming a span as the parent of what the receiver does. */
export const formatTraceparent = (span: TraceParent): string => `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

/**
 * Whether a trace id falls within the ratio: its last 8 hex digits read as a fraction of 2^32, so every
 * span of one trace (here or in another service that samples the same way) gets the same answer.
 */
export const withinRatio = (traceId: string, ratio: number): boolean =>
  ratio >= 1 || parseInt(traceId.slice(-8), 16) / 0x1_0000_0000 < ratio

/** The decision of OTEL_TRACES_SAMPLER for a new span, given its parent (undefined for a root span). */
export const sampleSpan = (sampler: TraceSampler, traceId: string, parent: { readonly sampled: boolean } | undefined): boolean => {
  switch (sampler.kind) {
    case "always_on":
      return true
    case "always_off":
      return false
    case "traceidratio":
      return withinRatio(traceId, sampler.ratio)
    case "parentbased_always_on":
      return parent === undefined ? true : parent.sampled
    case "parentbased_always_off":
      return parent === undefined ? false : parent.sampled
    case "parentbased_traceidratio":
      return parent === undefined ? withinRatio(traceId, sampler.ratio) : parent.sampled
  }
}
