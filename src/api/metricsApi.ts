import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { prometheusContentType } from "../domain/prometheusText"

/** The service's measures for a Prometheus scraper (docs/operations.md, "Metrics"). */
export class MetricsApi extends HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(HttpApiSchema.Text({ contentType: prometheusContentType }))
      .annotate(OpenApi.Summary, "Prometheus metrics")
      .annotate(
        OpenApi.Description,
        "Requests, upstream latency and first byte, tokens, cost, refusals, usage queue, exports, database pool and the process, " +
          "in the Prometheus text format. Bearer `METRICS_TOKEN` when it is set (401 otherwise); 404 when `METRICS=off`."
      )
  )
{}
