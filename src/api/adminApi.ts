import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Scope } from "../domain/apiKey"
import { strictParse, WorkspaceSettings, WorkspaceSettingsPatch } from "../domain/workspaceSettings"
import { adminErrorSchema } from "./errors/adminError"
import { withoutNul } from "./schemas/common"
import { IngestEventsPayload, MAX_EVENTS_PER_BATCH } from "./schemas/events"
import { AdminAuth } from "./security"
import { AuditPageView, ChangeMember, InvitedMember, InviteMember, MemberView } from "./schemas/members"
import { ProviderKeyView, RotationResultView, SetProviderKey } from "./schemas/providerKeys"
import { UsageExportDataType, UsageExportRequest, UsageExportResult } from "./schemas/usageExport"

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
const memberId = HttpApiSchema.param("memberId", Schema.String)
const provider = HttpApiSchema.param("provider", Schema.Literal("provider_a", "provider_b", "provider_c"))
const PageParams = {
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 200))),
  cursor: Schema.optional(Schema.String)
}

/** Operator API behind ADMIN_TOKEN: workspaces, their keys, and platform activity ingestion. */
export class AdminApi extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.get("listWorkspaces", "/admin/workspaces")
      .setUrlParams(Schema.Struct({ search: Schema.optional(Schema.String), ...PageParams }))
      .addSuccess(Schema.Struct({ data: Schema.Array(WorkspaceView), nextCursor: Schema.NullOr(Schema.String) }))
      .annotate(OpenApi.Description, "Newest first. `search`: part of the name (case-insensitive) or a whole id. `limit` 1–200 (50).")
  )
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
  .add(
    HttpApiEndpoint.post("inviteMember")`/admin/workspaces/${workspaceId}/members`
      .setPayload(InviteMember)
      .addSuccess(InvitedMember, { status: 201 })
      .annotate(
        OpenApi.Description,
        "Invites a person (by email) with a single-use link valid 7 days. Inviting an existing member again gives a fresh " +
          "link: that is how a password is reset."
      )
  )
  .add(HttpApiEndpoint.get("listMembers")`/admin/workspaces/${workspaceId}/members`.addSuccess(Schema.Struct({ data: Schema.Array(MemberView) })))
  .add(
    HttpApiEndpoint.patch("changeMember")`/admin/workspaces/${workspaceId}/members/${memberId}`
      .setPayload(ChangeMember)
      .addSuccess(MemberView)
      .annotate(OpenApi.Description, "409 `last_admin` when it would leave the workspace without an active admin.")
  )
  .add(
    HttpApiEndpoint.del("removeMember")`/admin/workspaces/${workspaceId}/members/${memberId}`
      .addSuccess(MemberView)
      .annotate(OpenApi.Description, "The person's sessions end at once. 409 `last_admin` for the last active admin.")
  )
  .add(
    HttpApiEndpoint.put("setProviderKey")`/admin/workspaces/${workspaceId}/provider-keys/${provider}`
      .setPayload(SetProviderKey)
      .addSuccess(ProviderKeyView)
      .annotate(
        OpenApi.Description,
        "Saves the workspace's own key for a provider, replacing any previous one. The key is checked with one cheap call to " +
          "the provider first (400 `provider_key_rejected` when refused; 502 when the provider cannot be asked) and stored " +
          "encrypted under CREDENTIALS_KEY (409 `credentials_key_missing` when the service has none). From then on every " +
          "request of the workspace to that provider goes upstream with this key. The key is never shown again."
      )
  )
  .add(
    HttpApiEndpoint.get("listProviderKeys")`/admin/workspaces/${workspaceId}/provider-keys`
      .addSuccess(Schema.Struct({ data: Schema.Array(ProviderKeyView) }))
  )
  .add(
    HttpApiEndpoint.del("removeProviderKey")`/admin/workspaces/${workspaceId}/provider-keys/${provider}`
      .addSuccess(ProviderKeyView)
      .annotate(OpenApi.Description, "The workspace's requests to the provider go with the service's own key again.")
  )
  .add(
    HttpApiEndpoint.post("rotateCredentials", "/admin/provider-keys/rotate")
      .addSuccess(RotationResultView)
      .annotate(
        OpenApi.Description,
        "Re-encrypts every stored provider key under CREDENTIALS_KEY, opening those of the previous key with " +
          "CREDENTIALS_KEY_PREVIOUS. Run it after restarting with the new key and the old one as CREDENTIALS_KEY_PREVIOUS; " +
          "once it reports nothing unreadable, CREDENTIALS_KEY_PREVIOUS can go."
      )
  )
  .add(
    HttpApiEndpoint.post("runExport")`/admin/workspaces/${workspaceId}/exports/${HttpApiSchema.param("dataType", UsageExportDataType)}`
      .setPayload(UsageExportRequest)
      .addSuccess(UsageExportResult)
      .annotate(
        OpenApi.Description,
        "Runs a usage export as the operator, without an API key of the workspace: the public export's answer, same " +
          "rules and errors; counts against the workspace's usage-export rate limit; audited as `export.run`."
      )
  )
  .add(
    HttpApiEndpoint.get("audit")`/admin/workspaces/${workspaceId}/audit`
      .setUrlParams(Schema.Struct({ action: Schema.optional(Schema.String), ...PageParams }))
      .addSuccess(AuditPageView)
  )
  .addError(adminErrorSchema)
  .middleware(AdminAuth)
  .annotate(OpenApi.Description, "Operator API, behind the bearer ADMIN_TOKEN.")
{}
