import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { Scope } from "../domain/apiKey"
import { type ConsoleActor, MemberRole } from "../domain/console"
import { maximumPasswordLength, minimumPasswordLength } from "../domain/password"
import { strictParse, TimeZone, WorkspaceSettings, WorkspaceSettingsPatch } from "../domain/workspaceSettings"
import { ApiKeyView, CreatedApiKey } from "./adminApi"
import { consoleErrorSchema } from "./errors/consoleError"
import { AuditPageView, ChangeMember, InvitedMember, InviteMember, MemberView } from "./schemas/members"
import { UsageExportDataType, UsageExportRequest, UsageExportResult } from "./schemas/usageExport"
import { SetProviderKey } from "./schemas/providerKeys"

/** The console's session cookie. */
export const sessionCookie = "wsapi_session"

/** The signed-in actor of a console call, provided by ConsoleAuth. */
export class CurrentConsoleActor extends Context.Tag("CurrentConsoleActor")<CurrentConsoleActor, ConsoleActor>() {}

/** Every state-changing console call must come from the service's own origin (PUBLIC_URL): 403 otherwise. */
export class ConsoleOrigin extends HttpApiMiddleware.Tag<ConsoleOrigin>()("ConsoleOrigin", {
  failure: consoleErrorSchema
}) {}

/** A console session: the HttpOnly cookie set at sign-in. */
export class ConsoleAuth extends HttpApiMiddleware.Tag<ConsoleAuth>()("ConsoleAuth", {
  provides: CurrentConsoleActor,
  failure: consoleErrorSchema,
  security: { session: HttpApiSecurity.apiKey({ key: sessionCookie, in: "cookie" }) }
}) {}

const Name = Schema.String.pipe(
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(200, { message: () => "name must be at most 200 characters" })
)
const Password = Schema.String.pipe(
  Schema.minLength(minimumPasswordLength, { message: () => `password must have at least ${minimumPasswordLength} characters` }),
  Schema.maxLength(maximumPasswordLength, { message: () => `password must have at most ${maximumPasswordLength} characters` })
)

export const WorkspaceMembership = Schema.Struct({ id: Schema.String, name: Schema.String, role: MemberRole })
  .annotations({ identifier: "WorkspaceMembership" })

export const SessionView = Schema.Struct({
  /** The signed-in person; null for the operator. */
  member: Schema.NullOr(Schema.Struct({ id: Schema.String, email: Schema.String, name: Schema.NullOr(Schema.String) })),
  operator: Schema.Boolean,
  /** The person's workspaces (active memberships); for the operator the newest workspaces, see GET /console/api/workspaces. */
  workspaces: Schema.Array(WorkspaceMembership)
}).annotations({ identifier: "ConsoleSession" })

export const SignIn = Schema.Union(
  Schema.Struct({ email: Schema.String.pipe(Schema.maxLength(320)), password: Schema.String.pipe(Schema.maxLength(maximumPasswordLength)) }),
  Schema.Struct({ adminToken: Schema.String.pipe(Schema.maxLength(1000)) })
).annotations({ identifier: "SignIn" })

export const InvitationView = Schema.Struct({
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  role: MemberRole,
  workspace: Schema.Struct({ id: Schema.String, name: Schema.String }),
  expiresAt: Schema.String,
  hasPassword: Schema.Boolean
}).annotations({ identifier: "Invitation" })

export const ConsoleApiKeyView = Schema.Struct({
  ...ApiKeyView.fields,
  createdBy: Schema.String.annotations({ description: "operator, or the email of the person who created the key" })
}).annotations({ identifier: "ConsoleApiKey" })
export const ConsoleCreatedApiKey = Schema.Struct({ ...CreatedApiKey.fields, createdBy: Schema.String })
  .annotations({ identifier: "ConsoleCreatedApiKey" })

const LocalDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "must be a date YYYY-MM-DD" })
)
export const UsageGroupBy = Schema.Literal("model", "apiKey", "family", "byok")

export const UsageQuery = Schema.Struct({
  from: LocalDate,
  to: LocalDate.annotations({ description: "exclusive" }),
  timezone: Schema.optional(TimeZone).annotations({ description: "IANA name; default: the workspace's time zone" }),
  groupBy: Schema.optional(UsageGroupBy).annotations({
    description: "default model; byok: groups `byok` (the workspace's own provider keys) and `managed` (the service's keys)"
  })
})

export const UsageRow = Schema.Struct({
  day: Schema.String,
  group: Schema.String,
  /** For groupBy=apiKey: the key's name (group is its id). */
  label: Schema.optional(Schema.String),
  requests: Schema.Int,
  inputTokens: Schema.Int,
  outputTokens: Schema.Int,
  costUsd: Schema.Number
}).annotations({ identifier: "UsageRow" })

export const ActivityRow = Schema.Struct({
  day: Schema.String,
  messages: Schema.Int,
  activeUsers: Schema.Int,
  inputTokens: Schema.Int,
  outputTokens: Schema.Int
}).annotations({ identifier: "ActivityRow" })

export const LimitView = Schema.Struct({
  family: Schema.String,
  model: Schema.NullOr(Schema.String),
  requestsPerMinute: Schema.Int,
  tokensPerMinute: Schema.Int,
  remainingRequests: Schema.NullOr(Schema.Int),
  remainingTokens: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "RateLimitReading" })

export const ConsoleSettings = Schema.Struct({
  ...WorkspaceSettings.fields,
  /** Read-only: the limits in force (defaults and overrides) and what remains of each now. */
  limits: Schema.Array(LimitView)
}).annotations({ identifier: "ConsoleSettings" })

export const ConsoleWorkspace = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  role: MemberRole,
  createdAt: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ConsoleWorkspace" })

export const RecentExportView = Schema.Struct({
  ...UsageExportResult.fields.data.fields,
  id: Schema.String,
  /** The time zone the export was asked in. */
  timezone: Schema.String,
  createdBy: Schema.String.annotations({ description: "operator, the email of the person, or the API key that ran it" }),
  createdAt: Schema.String,
  /** When the download link (signed again for this answer, same expiry) stops working. */
  expiresAt: Schema.String
}).annotations({ identifier: "RecentExport" })

/** A provider's key as the console shows it: admins see its details, members only whether one is set. */
export const ConsoleProviderKey = Schema.Struct({
  provider: Schema.String,
  set: Schema.Boolean,
  last4: Schema.NullOr(Schema.String),
  createdAt: Schema.NullOr(Schema.String),
  createdBy: Schema.NullOr(Schema.String),
  lastUsedAt: Schema.NullOr(Schema.String),
  lastError: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ConsoleProviderKey" })

export const ModelView = Schema.Struct({ provider: Schema.String, family: Schema.String, id: Schema.String })
  .annotations({ identifier: "ConsoleModel" })

const workspaceId = HttpApiSchema.param("id", Schema.String)
const keyId = HttpApiSchema.param("keyId", Schema.String)
const memberId = HttpApiSchema.param("memberId", Schema.String)
const provider = HttpApiSchema.param("provider", Schema.Literal("provider_a", "provider_b", "provider_c"))
const token = HttpApiSchema.param("token", Schema.String)
const dataType = HttpApiSchema.param("dataType", UsageExportDataType)
const PageParams = {
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 200))),
  cursor: Schema.optional(Schema.String)
}

/** Sign-in, sign-out and invitations: no session needed, but the Origin check applies. */
export class ConsoleSessionApi extends HttpApiGroup.make("consoleSession")
  .add(
    HttpApiEndpoint.post("signIn", "/console/api/session")
      .setPayload(SignIn)
      .addSuccess(SessionView)
      .annotate(
        OpenApi.Description,
        "`{ email, password }` or, for the operator, `{ adminToken }`. Sets the HttpOnly session cookie. The sixth failure " +
          "within 15 minutes for the same email or client address is 429 with retry-after."
      )
  )
  .add(HttpApiEndpoint.get("session", "/console/api/session").addSuccess(SessionView))
  .add(HttpApiEndpoint.del("signOut", "/console/api/session").addSuccess(HttpApiSchema.NoContent))
  .add(HttpApiEndpoint.get("invitation")`/console/api/invitations/${token}`.addSuccess(InvitationView))
  .add(
    HttpApiEndpoint.post("acceptInvitation")`/console/api/invitations/${token}`
      .setPayload(Schema.Struct({ password: Password, name: Schema.optional(Name) }))
      .addSuccess(SessionView)
      .annotate(OpenApi.Description, "Sets the password (at least 12 characters) and signs in. 410 when used or expired.")
  )
  .addError(consoleErrorSchema)
  .middleware(ConsoleOrigin)
  .annotate(OpenApi.Description, "Console sessions: sign-in with a password or the operator's ADMIN_TOKEN, invitations.")
{}

const ws = "/console/api/workspaces"

/** The console's workspace API, cookie-authenticated; roles are enforced for every call. */
export class ConsoleApi extends HttpApiGroup.make("console")
  .add(
    HttpApiEndpoint.get("workspaces", ws)
      .setUrlParams(Schema.Struct({ search: Schema.optional(Schema.String), ...PageParams }))
      .addSuccess(Schema.Struct({ data: Schema.Array(ConsoleWorkspace), nextCursor: Schema.NullOr(Schema.String) }))
      .annotate(OpenApi.Description, "A person's workspaces; for the operator every workspace, with search and paging.")
  )
  .add(
    HttpApiEndpoint.post("createWorkspace", ws)
      .setPayload(Schema.Struct({ name: Name, settings: Schema.optional(WorkspaceSettingsPatch) }).annotations(strictParse))
      .addSuccess(ConsoleWorkspace, { status: 201 })
      .annotate(OpenApi.Description, "Operator only.")
  )
  .add(HttpApiEndpoint.get("workspace")`/console/api/workspaces/${workspaceId}`.addSuccess(ConsoleWorkspace))
  .add(HttpApiEndpoint.get("models")`/console/api/workspaces/${workspaceId}/models`.addSuccess(Schema.Struct({ data: Schema.Array(ModelView) })))
  .add(
    HttpApiEndpoint.get("listApiKeys")`/console/api/workspaces/${workspaceId}/api-keys`
      .addSuccess(Schema.Struct({ data: Schema.Array(ConsoleApiKeyView) }))
      .annotate(OpenApi.Description, "Admins see every key of the workspace, members only their own.")
  )
  .add(
    HttpApiEndpoint.post("createApiKey")`/console/api/workspaces/${workspaceId}/api-keys`
      .setPayload(Schema.Struct({
        name: Name,
        scopes: Schema.NonEmptyArray(Scope).annotations({
          message: () => "scopes must be a non-empty list of USAGE_EXPORT_API and/or COMPLETION_API"
        })
      }))
      .addSuccess(ConsoleCreatedApiKey, { status: 201 })
      .annotate(OpenApi.Description, "Members may create COMPLETION_API keys only. The key is in this answer only.")
  )
  .add(HttpApiEndpoint.del("revokeApiKey")`/console/api/workspaces/${workspaceId}/api-keys/${keyId}`.addSuccess(ConsoleApiKeyView))
  .add(
    HttpApiEndpoint.post("runExport")`/console/api/workspaces/${workspaceId}/exports/${dataType}`
      .setPayload(UsageExportRequest)
      .addSuccess(UsageExportResult)
      .annotate(OpenApi.Description, "Admins only: the public export endpoint's result (same rules and errors).")
  )
  .add(
    HttpApiEndpoint.get("recentExports")`/console/api/workspaces/${workspaceId}/exports`
      .setUrlParams(Schema.Struct({ limit: PageParams.limit }))
      .addSuccess(Schema.Struct({ data: Schema.Array(RecentExportView) }))
      .annotate(
        OpenApi.Description,
        "Admins only: the workspace's exports (console and public endpoints) whose links still live, newest first, " +
          "each with a freshly signed download link; limit default 20."
      )
  )
  .add(
    HttpApiEndpoint.get("usage")`/console/api/workspaces/${workspaceId}/usage`
      .setUrlParams(UsageQuery)
      .addSuccess(Schema.Struct({ data: Schema.Array(UsageRow) }))
      .annotate(
        OpenApi.Description,
        "Forwarded API requests per local day (`from` inclusive, `to` exclusive, in `timezone`) and group (model, apiKey or family)."
      )
  )
  .add(
    HttpApiEndpoint.get("activity")`/console/api/workspaces/${workspaceId}/activity`
      .setUrlParams(Schema.Struct({ from: LocalDate, to: LocalDate, timezone: Schema.optional(TimeZone) }))
      .addSuccess(Schema.Struct({ data: Schema.Array(ActivityRow) }))
      .annotate(OpenApi.Description, "Platform activity per local day: messages, distinct active users, tokens.")
  )
  .add(
    HttpApiEndpoint.get("listMembers")`/console/api/workspaces/${workspaceId}/members`
      .addSuccess(Schema.Struct({ data: Schema.Array(MemberView) }))
  )
  .add(
    HttpApiEndpoint.post("inviteMember")`/console/api/workspaces/${workspaceId}/members`
      .setPayload(InviteMember)
      .addSuccess(InvitedMember, { status: 201 })
      .annotate(OpenApi.Description, "Inviting an existing member again gives a fresh link (how a password is reset).")
  )
  .add(HttpApiEndpoint.patch("changeMember")`/console/api/workspaces/${workspaceId}/members/${memberId}`.setPayload(ChangeMember).addSuccess(MemberView))
  .add(HttpApiEndpoint.del("removeMember")`/console/api/workspaces/${workspaceId}/members/${memberId}`.addSuccess(MemberView))
  .add(
    HttpApiEndpoint.get("providerKeys")`/console/api/workspaces/${workspaceId}/provider-keys`
      .addSuccess(Schema.Struct({ data: Schema.Array(ConsoleProviderKey) }))
  )
  .add(
    HttpApiEndpoint.put("setProviderKey")`/console/api/workspaces/${workspaceId}/provider-keys/${provider}`
      .setPayload(SetProviderKey)
      .addSuccess(ConsoleProviderKey)
  )
  .add(HttpApiEndpoint.del("removeProviderKey")`/console/api/workspaces/${workspaceId}/provider-keys/${provider}`.addSuccess(ConsoleProviderKey))
  .add(HttpApiEndpoint.get("settings")`/console/api/workspaces/${workspaceId}/settings`.addSuccess(ConsoleSettings))
  .add(
    HttpApiEndpoint.patch("updateSettings")`/console/api/workspaces/${workspaceId}/settings`
      .setPayload(WorkspaceSettingsPatch)
      .addSuccess(ConsoleSettings)
  )
  .add(
    HttpApiEndpoint.get("audit")`/console/api/workspaces/${workspaceId}/audit`
      .setUrlParams(Schema.Struct({ action: Schema.optional(Schema.String), ...PageParams }))
      .addSuccess(AuditPageView)
  )
  .addError(consoleErrorSchema)
  .middleware(ConsoleOrigin)
  .middleware(ConsoleAuth)
  .annotate(OpenApi.Description, "The web console's API: session cookie; 401 without one, 403 when the role does not allow, 404 for another workspace.")
{}
