import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

const NotReadyBody = Schema.Struct({ status: Schema.Literal("unavailable"), reason: Schema.String }).annotations({ identifier: "NotReady" })

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
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })).addError(notReadyResponse))
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready"), migration: Schema.Number }))
      .addError(notReadyResponse)
  )
{}
