import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Scope } from "../domain/apiKey"
import { strictParse, WorkspaceSettings, WorkspaceSettingsPatch } from "../domain/workspaceSettings"
import { adminErrorSchema } from "./errors/adminError"
import { withoutNul } from "./schemas/common"
import { IngestEventsPayload, MAX_EVENTS_PER_BATCH } from "./schemas/events"
import { AdminAuth } from "./security"

const Name = Schema.String.pipe(
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(200, { message: () => "name must be at most 200 characters" }),
  withoutNul("name")
)

export const WorkspaceView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  settings: WorkspaceSettings,
  createdAt: Schema.String
}).annotations({ identifier: "Workspace" })

export const ApiKeyView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  displayPrefix: Schema.String,
  scopes: Schema.Array(Scope),
  createdAt: Schema.String,
  revokedAt: Schema.NullOr(Schema.String),
  lastUsedAt: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ApiKey" })

export const CreatedApiKey = Schema.Struct({
  ...ApiKeyView.fields,
  key: Schema.String.annotations({ description: "The key itself. Shown only in this response; store it now." })
}).annotations({ identifier: "CreatedApiKey" })

export const IngestEventsResult = Schema.Struct({
  accepted: Schema.Int.annotations({ description: "Events stored by this request" }),
  duplicates: Schema.Int.annotations({ description: "Events whose id the workspace had already sent (nothing stored)" })
}).annotations({ identifier: "IngestEventsResult" })

const workspaceId = HttpApiSchema.param("id", Schema.String)
const keyId = HttpApiSchema.param("keyId", Schema.String)

/** Operator API behind ADMIN_TOKEN: workspaces, their keys, and platform activity ingestion. */
export class AdminApi extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createWorkspace", "/admin/workspaces")
      // Strict: an unknown top-level key (`setings`) is a 400, not a silent no-op.
      .setPayload(Schema.Struct({ name: Name, settings: Schema.optional(WorkspaceSettingsPatch) }).annotations(strictParse))
      .addSuccess(WorkspaceView, { status: 201 })
  )
  .add(HttpApiEndpoint.get("getWorkspace")`/admin/workspaces/${workspaceId}`.addSuccess(WorkspaceView))
  .add(
    HttpApiEndpoint.patch("updateWorkspace")`/admin/workspaces/${workspaceId}`
      .setPayload(
        Schema.Struct({ name: Schema.optional(Name), settings: Schema.optional(WorkspaceSettingsPatch) }).annotations(strictParse)
      )
      .addSuccess(WorkspaceView)
  )
  .add(
    HttpApiEndpoint.post("createApiKey")`/admin/workspaces/${workspaceId}/api-keys`
      .setPayload(Schema.Struct({
        name: Name,
        scopes: Schema.NonEmptyArray(Scope).annotations({
          message: () => "scopes must be a non-empty list of USAGE_EXPORT_API and/or COMPLETION_API"
        })
      }))
      .addSuccess(CreatedApiKey, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("listApiKeys")`/admin/workspaces/${workspaceId}/api-keys`
      .addSuccess(Schema.Struct({ data: Schema.Array(ApiKeyView) }))
  )
  .add(
    HttpApiEndpoint.del("revokeApiKey")`/admin/workspaces/${workspaceId}/api-keys/${keyId}`.addSuccess(ApiKeyView)
  )
  .add(
    HttpApiEndpoint.post("ingestEvents")`/admin/workspaces/${workspaceId}/events`
      .setPayload(IngestEventsPayload)
      .addSuccess(IngestEventsResult)
      .annotate(
        OpenApi.Description,
        `Ingests platform activity (message and workflow_run events), at most ${MAX_EVENTS_PER_BATCH} per request. ` +
          "All or nothing: the first bad event rejects the batch with 400 naming it (field `events[17].occurredAt`) " +
          "and nothing is written. Idempotent by event id: events the workspace already sent are counted as duplicates."
      )
  )
  .addError(adminErrorSchema)
  .middleware(AdminAuth)
  .annotate(OpenApi.Description, "Operator API, behind the bearer ADMIN_TOKEN.")
{}
