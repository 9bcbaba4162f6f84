import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Option } from "effect"
import { appConfig, type AppConfigShape, describeConfigError } from "../src/config"

const read = (env: Record<string, string>): Either.Either<AppConfigShape, string> =>
  Effect.runSync(
    Effect.either(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))).pipe(
      Effect.map(Either.mapLeft(describeConfigError))
    )
  )
const accepted = (env: Record<string, string>) => Either.getOrThrow(read(env))
const refused = (env: Record<string, string>) => Either.match(read(env), { onLeft: (line) => line, onRight: () => "accepted" })

describe("metrics and traces settings", () => {
  it("measures by default, without a token or workspace labels, and traces nothing", () => {
    const config = accepted({})
    expect(config.metrics).toEqual({ enabled: true, token: Option.none(), workspaceLabels: false })
    expect(Option.isNone(config.tracing)).toBe(true)
  })

  it("reads METRICS=off, METRICS_TOKEN and METRICS_WORKSPACE_LABELS, and refuses what they cannot be", () => {
    const config = accepted({ METRICS: "off", METRICS_TOKEN: "a-long-metrics-token", METRICS_WORKSPACE_LABELS: "true" })
    expect(config.metrics.enabled).toBe(false)
    expect(config.metrics.workspaceLabels).toBe(true)
    expect(refused({ METRICS: "maybe" })).toMatch(/^Invalid configuration: METRICS: /)
    expect(refused({ METRICS_TOKEN: "short" })).toMatch(/METRICS_TOKEN: Expected at least 16 characters/)
  })

  it("traces to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces, or to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given", () => {
    const root = accepted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })
    expect(Option.getOrThrow(root.tracing)).toEqual({
      url: "http://collector:4318/v1/traces",
      headers: {},
      serviceName: "workspace-api",
      sampler: { kind: "parentbased_always_on" },
      exportIntervalMs: 5_000
    })
    const traces = accepted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://other:4318/custom/traces" })
    expect(Option.getOrThrow(traces.tracing).url).toBe("http://other:4318/custom/traces")
  })

  it("reads the sampler, its ratio, the service name and the exporter's headers", () => {
    const config = Option.getOrThrow(accepted({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.1",
      OTEL_SERVICE_NAME: "gateway-eu",
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20abc, x-tenant = eu"
    }).tracing)
    expect(config.sampler).toEqual({ kind: "parentbased_traceidratio", ratio: 0.1 })
    expect(config.serviceName).toBe("gateway-eu")
    expect(config.headers).toEqual({ authorization: "Bearer abc", "x-tenant": "eu" })
    expect(refused({ OTEL_TRACES_SAMPLER: "sometimes" })).toMatch(/OTEL_TRACES_SAMPLER/)
    expect(refused({ OTEL_TRACES_SAMPLER_ARG: "2" })).toMatch(/OTEL_TRACES_SAMPLER_ARG: Expected a ratio between 0 and 1/)
    expect(refused({ OTEL_EXPORTER_OTLP_HEADERS: "novalue" })).toMatch(/OTEL_EXPORTER_OTLP_HEADERS/)
    expect(refused({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT/)
  })
})
