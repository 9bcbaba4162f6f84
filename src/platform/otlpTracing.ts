import { OtlpSerialization, OtlpTracer } from "@effect/opentelemetry"
import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer, Option, Tracer } from "effect"
import { AppConfig, type TracingSettings } from "../config"
import { sampleSpan, type TraceSampler } from "../domain/traceContext"

/**
 * A span left out by the sampler: it keeps its ids (its children and the `traceparent` sent upstream
 * carry them, flagged not sampled) and records nothing.
 */
const unsampledSpan = (span: Tracer.Span): Tracer.Span => ({
  _tag: "Span",
  name: span.name,
  traceId: span.traceId,
  spanId: span.spanId,
  parent: span.parent,
  context: span.context,
  status: span.status,
  attributes: new Map(),
  links: [],
  sampled: false,
  kind: span.kind,
  end: () => {},
  attribute: () => {},
  event: () => {},
  addLinks: () => {}
})

/**
 * The OTLP tracer behind OTEL_TRACES_SAMPLER: each span is made by the exporting tracer, and one the
 * sampler leaves out is swapped for an unsampled one before anything is recorded on it (so it is
 * never posted).
 */
const sampled = (exporting: Tracer.Tracer, sampler: TraceSampler): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = exporting.span(name, parent, context, links, startTime, kind, options)
      return sampleSpan(sampler, span.traceId, Option.getOrUndefined(parent)) ? span : unsampledSpan(span)
    },
    context: (f, fiber) => exporting.context(f, fiber)
  })

/** Spans posted as OTLP/HTTP JSON to the traces endpoint, every OTEL_BSP_SCHEDULE_DELAY and at shutdown. */
const otlpTracing = (settings: TracingSettings) =>
  Layer.unwrapScoped(
    Effect.map(
      OtlpTracer.make({
        url: settings.url,
        headers: settings.headers,
        resource: { serviceName: settings.serviceName },
        exportInterval: settings.exportIntervalMs
      }),
      (exporting) => Layer.setTracer(sampled(exporting, settings.sampler))
    )
  ).pipe(Layer.provide([FetchHttpClient.layer, OtlpSerialization.layerJson]))

/**
 * OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT) is set; otherwise
 * nothing (and the services make no spans of their own: see `spansWhen`).
 */
export const tracingFromConfig = Layer.unwrapEffect(
  Effect.map(AppConfig, ({ tracing }) => Option.match(tracing, { onNone: () => Layer.empty, onSome: otlpTracing }))
)
