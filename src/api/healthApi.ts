import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class NotReady extends Schema.TaggedError<NotReady>()(
  "NotReady",
  { status: Schema.Literal("unavailable"), reason: Schema.String },
  HttpApiSchema.annotations({ status: 503 })
) {}

/** Liveness (the process answers) and readiness (the database is reachable and migrated). */
export class HealthApi extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })))
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready"), migration: Schema.Number }))
      .addError(NotReady)
  )
{}
