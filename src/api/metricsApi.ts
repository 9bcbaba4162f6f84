import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { prometheusContentType } from "../domain/prometheusText"
import { adminErrors } from "./errors/adminError"
import { OperationFamily } from "./openapi/annotations"
import { families } from "./openapi/families"

/** The service's measures for a Prometheus scraper (docs/operations.md, "Metrics"): the operator's, like the admin API. */
export class MetricsApi extends HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(HttpApiSchema.Text({ contentType: prometheusContentType }))
      .addError(adminErrors(401, 404))
      .annotateContext(OpenApi.annotations({
        summary: "Prometheus metrics",
        description: "Requests, upstream latency and first byte, tokens, cost, refusals, the usage queue, exports, the " +
          "database pool and the process, in the Prometheus text format. Bearer `METRICS_TOKEN` when it is set (401 " +
          "otherwise); 404 when `METRICS=off`."
      }))
  )
  .annotate(OperationFamily, families.admin)
{}
