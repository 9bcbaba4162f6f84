import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { WorkspaceApi } from "../api/Api"
import { problemAs } from "../api/errors/errorFormat"
import { AppConfig } from "../config"
import { bearerToken } from "../api/security"
import { Metrics } from "../platform/Metrics"

const digest = (value: string) => crypto.createHash("sha256").update(value).digest()

const notFound = problemAs("admin", { status: 404, code: "not_found", message: "Metrics are off (METRICS=off)." })
const unauthorized = problemAs("admin", { status: 401, code: "unauthorized", message: "A valid metrics token is required." })

/** GET /metrics: the measures as Prometheus text, behind METRICS_TOKEN (compared in constant time) when it is set. */
export const MetricsHandlers = HttpApiBuilder.group(WorkspaceApi, "metrics", (handlers) =>
  Effect.gen(function*() {
    const metrics = yield* Metrics
    const { metrics: settings } = yield* AppConfig
    const expected = Option.map(settings.token, (token) => digest(Redacted.value(token)))
    return handlers.handle("metrics", () =>
      Effect.gen(function*() {
        if (!metrics.enabled) return yield* Effect.fail(notFound)
        if (Option.isSome(expected)) {
          const presented = bearerToken((yield* HttpServerRequest.HttpServerRequest).headers)
          if (presented === undefined || !crypto.timingSafeEqual(digest(presented), expected.value)) return yield* Effect.fail(unauthorized)
        }
        return yield* metrics.render
      }))
  }))
