import { Effect, Option, type Tracer } from "effect"
import { identity } from "effect/Function"
import type { AppConfigShape } from "../config"

/** Wraps an effect in a span named `name`, a child of the current one. */
export type SpanOf = (
  name: string,
  options?: { readonly attributes?: Record<string, unknown>; readonly kind?: Tracer.SpanKind }
) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

const untraced: SpanOf = () => identity

/**
 * The span maker of a service: `Effect.withSpan` when traces are exported, nothing at all otherwise
 * (not even the native tracer's span and context change: without an OTLP endpoint, tracing costs the
 * hot path nothing). No stack trace is captured: it would cost more than the span.
 */
export const spansWhen = (config: Pick<AppConfigShape, "tracing">): SpanOf =>
  Option.isNone(config.tracing)
    ? untraced
    : (name, options) => (self) => Effect.withSpan(self, name, { ...options, captureStackTrace: false })
