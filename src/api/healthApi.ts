import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { OperationFamily } from "./openapi/annotations"
import { families } from "./openapi/families"

/** Whether the usage journal takes records (absent for stores kept in memory). */
const JournalState = Schema.Literal("ok", "failing")

const NotReadyBody = Schema.Struct({
  status: Schema.Literal("unavailable"),
  reason: Schema.String,
  journal: Schema.optional(JournalState)
}).annotations({
  identifier: "NotReady",
  examples: [{ status: "unavailable", reason: "database at migration 3, expected 10" }]
})

const DependencyState = Schema.Literal("up", "down")

/** PostgreSQL (absent only for stores kept in memory); Redis with RATE_LIMIT_STORE=redis; S3 with EXPORT_STORAGE=s3. */
const DependencyStates = Schema.Struct({
  postgresql: Schema.optional(DependencyState),
  redis: Schema.optional(DependencyState),
  s3: Schema.optional(DependencyState)
}).annotations({ identifier: "DependencyStates" })

export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", NotReadyBody.fields) {}

/** 503 with `{ status, reason }`: the error's fields only, not its tag. */
const notReadyResponse = Schema.transform(NotReadyBody, Schema.typeSchema(NotReady), {
  strict: true,
  decode: (body) => new NotReady(body),
  encode: ({ journal, reason, status }) => ({ status, reason, ...(journal === undefined ? {} : { journal }) })
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
      .addSuccess(Schema.Struct({
        status: Schema.Literal("ready"),
        migration: Schema.Number,
        journal: Schema.optional(JournalState),
        dependencies: Schema.optional(DependencyStates)
      }))
      .addError(notReadyResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Readiness, with the state of each dependency in use",
        description: "200 with the database's migration and `dependencies` (postgresql, and redis or s3 when configured: " +
          "`up` or `down`) when the service can work; 503 with the reason when PostgreSQL is unreachable or behind the " +
          "code's migrations, or when Redis is down and rate limits fail closed. S3 down is reported, not a 503: only " +
          "exports need it. `journal`: whether the usage journal takes records (`ok`) or its disk refuses them " +
          "(`failing`: new usage records wait in memory only); failing is a 503 only with USAGE_JOURNAL_REQUIRED=true, " +
          "which refuses billable requests meanwhile. No key needed."
      }))
  )
  .annotate(OperationFamily, families.health)
{}
