import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { OperationFamily } from "./openapi/annotations"
import { families } from "./openapi/families"

const NotReadyBody = Schema.Struct({ status: Schema.Literal("unavailable"), reason: Schema.String }).annotations({
  identifier: "NotReady",
  examples: [{ status: "unavailable", reason: "database at migration 3, expected 10" }]
})

export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", NotReadyBody.fields) {}

/** 503 with `{ status, reason }`: the error's fields only, not its tag. */
const notReadyResponse = Schema.transform(NotReadyBody, Schema.typeSchema(NotReady), {
  strict: true,
  decode: (body) => new NotReady(body),
  encode: ({ reason, status }) => ({ status, reason })
}).annotations(HttpApiSchema.annotations({ status: 503 }))

/**
 * Liveness (the process answers, and the embedded PostgreSQL it owns is alive) and readiness (the
 * database is reachable and migrated).
 */
export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("healthz", "/healthz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
      .addError(notReadyResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Liveness",
        description: "200 while the process answers and the embedded PostgreSQL it owns (if any) is alive; 503 with the " +
          "reason otherwise. No key needed."
      }))
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready"), migration: Schema.Number }))
      .addError(notReadyResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Readiness",
        description: "200 with the database's migration once the database is reachable and fully migrated; 503 with the " +
          "reason otherwise. No key needed."
      }))
  )
  .annotate(OperationFamily, families.health)
{}
