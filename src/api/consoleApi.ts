import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { Scope } from "../domain/apiKey"
import { type ConsoleActor, MemberRole } from "../domain/console"
import { maximumPasswordLength, minimumPasswordLength } from "../domain/password"
import { strictParse, TimeZone, WorkspaceSettings, WorkspaceSettingsPatch } from "../domain/workspaceSettings"
import { ApiKeyView, CreatedApiKey } from "./adminApi"
import { consoleErrors } from "./errors/consoleError"
import { exportRequestExample } from "./exportsApi"
import { OperationFamily, RequestExample } from "./openapi/annotations"
import { families } from "./openapi/families"
import { AuditPageView, ChangeMember, InvitedMember, InviteMember, MemberView } from "./schemas/members"
import { UsageExportDataType, UsageExportRequest, UsageExportResult } from "./schemas/usageExport"
import { SetProviderKey } from "./schemas/providerKeys"

/** The console's session cookie. */
export const sessionCookie = "wsapi_session"

/** The signed-in actor of a console call, provided by ConsoleAuth. */
export class CurrentConsoleActor extends Context.Tag("CurrentConsoleActor")<CurrentConsoleActor, ConsoleActor>() {}

/** Every state-changing console call must come from the service's own origin (PUBLIC_URL): 403 otherwise. */
export class ConsoleOrigin extends HttpApiMiddleware.Tag<ConsoleOrigin>()("ConsoleOrigin", {
  failure: consoleErrors(403)
}) {}

/** A console session: the HttpOnly cookie set at sign-in. */
export class ConsoleAuth extends HttpApiMiddleware.Tag<ConsoleAuth>()("ConsoleAuth", {
  provides: CurrentConsoleActor,
  // 401 without a valid session; 503 when sessions cannot be read.
  failure: consoleErrors(401, 503),
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

/** A body refused before the handler: not the payload (400), too large (413), not JSON (415). */
const refusedBody = consoleErrors(400, 413, 415)
const doc = (summary: string, description: string) => OpenApi.annotations({ summary, description })

/** Sign-in, sign-out and invitations: no session needed, but the Origin check applies. */
export class ConsoleSessionApi extends HttpApiGroup.make("consoleSession")
  .add(
    HttpApiEndpoint.post("signIn", "/console/api/session")
      .setPayload(SignIn)
      .addSuccess(SessionView)
      .addError(refusedBody)
      .addError(consoleErrors(401, 429))
      .annotateContext(doc(
        "Sign in",
        "`{ email, password }` or, for the operator, `{ adminToken }`. Sets the HttpOnly session cookie. The sixth failure " +
          "within 15 minutes for the same email or client address is 429 with retry-after."
      ))
      .annotate(RequestExample, { email: "ada@example.com", password: "correct horse battery staple" })
  )
  .add(
    HttpApiEndpoint.get("session", "/console/api/session")
      .addSuccess(SessionView)
      .addError(consoleErrors(401))
      .annotateContext(doc("Who is signed in", "The signed-in person (or the operator) and their workspaces; 401 without a session."))
  )
  .add(
    HttpApiEndpoint.del("signOut", "/console/api/session")
      .addSuccess(HttpApiSchema.NoContent)
      .annotateContext(doc("Sign out", "Ends the session and clears its cookie; without a session it does nothing."))
  )
  .add(
    HttpApiEndpoint.get("invitation")`/console/api/invitations/${token}`
      .addSuccess(InvitationView)
      .addError(consoleErrors(404, 410))
      .annotateContext(doc("Read an invitation", "Whom it invites into which workspace; 410 when used or expired."))
  )
  .add(
    HttpApiEndpoint.post("acceptInvitation")`/console/api/invitations/${token}`
      .setPayload(Schema.Struct({ password: Password, name: Schema.optional(Name) }))
      .addSuccess(SessionView)
      .addError(refusedBody)
      .addError(consoleErrors(404, 410))
      .annotateContext(doc(
        "Accept an invitation",
        "Sets the password (at least 12 characters) and signs in. 410 when used or expired."
      ))
      .annotate(RequestExample, { password: "correct horse battery staple", name: "Ada" })
  )
  // Sessions and invitations live in the database: 503 when it is unavailable.
  .addError(consoleErrors(503))
  .middleware(ConsoleOrigin)
  .annotate(OperationFamily, families.console)
{}

const ws = "/console/api/workspaces"

/** The console's workspace API, cookie-authenticated; roles are enforced for every call. */
export class ConsoleApi extends HttpApiGroup.make("console")
  .add(
    HttpApiEndpoint.get("workspaces", ws)
      .setUrlParams(Schema.Struct({ search: Schema.optional(Schema.String), ...PageParams }))
      .addSuccess(Schema.Struct({ data: Schema.Array(ConsoleWorkspace), nextCursor: Schema.NullOr(Schema.String) }))
      .addError(consoleErrors(400))
      .annotateContext(doc("List my workspaces", "A person's workspaces; for the operator every workspace, with search and paging."))
  )
  .add(
    HttpApiEndpoint.post("createWorkspace", ws)
      .setPayload(Schema.Struct({ name: Name, settings: Schema.optional(WorkspaceSettingsPatch) }).annotations(strictParse))
      .addSuccess(ConsoleWorkspace, { status: 201 })
      .addError(refusedBody)
      .annotateContext(doc("Create a workspace", "Operator only."))
      .annotate(RequestExample, { name: "Research team" })
  )
  .add(
    HttpApiEndpoint.get("workspace")`/console/api/workspaces/${workspaceId}`
      .addSuccess(ConsoleWorkspace)
      .annotateContext(doc("Get a workspace", "The workspace and the caller's role in it."))
  )
  .add(
    HttpApiEndpoint.get("models")`/console/api/workspaces/${workspaceId}/models`
      .addSuccess(Schema.Struct({ data: Schema.Array(ModelView) }))
      .annotateContext(doc("List the workspace's models", "The models the workspace may call: the catalog's, or its own list for a provider it brings a key for."))
  )
  .add(
    HttpApiEndpoint.get("listApiKeys")`/console/api/workspaces/${workspaceId}/api-keys`
      .addSuccess(Schema.Struct({ data: Schema.Array(ConsoleApiKeyView) }))
      .annotateContext(doc("List API keys", "Admins see every key of the workspace, members only their own."))
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
      .addError(refusedBody)
      .annotateContext(doc("Create an API key", "Members may create COMPLETION_API keys only. The key is in this answer only."))
      .annotate(RequestExample, { name: "My laptop", scopes: ["COMPLETION_API"] })
  )
  .add(
    HttpApiEndpoint.del("revokeApiKey")`/console/api/workspaces/${workspaceId}/api-keys/${keyId}`
      .addSuccess(ConsoleApiKeyView)
      .annotateContext(doc("Revoke an API key", "Admins revoke any key of the workspace, members only their own."))
  )
  .add(
    HttpApiEndpoint.post("runExport")`/console/api/workspaces/${workspaceId}/exports/${dataType}`
      .setPayload(UsageExportRequest)
      .addSuccess(UsageExportResult)
      .addError(refusedBody)
      .addError(consoleErrors(429, 500))
      .annotateContext(doc("Run a usage export", "Admins only: the public export endpoint's result (same rules and errors)."))
      .annotate(RequestExample, exportRequestExample)
  )
  .add(
    HttpApiEndpoint.get("recentExports")`/console/api/workspaces/${workspaceId}/exports`
      .setUrlParams(Schema.Struct({ limit: PageParams.limit }))
      .addSuccess(Schema.Struct({ data: Schema.Array(RecentExportView) }))
      .addError(consoleErrors(400))
      .annotateContext(doc(
        "List recent exports",
        "Admins only: the workspace's exports (console and public endpoints) whose links still live, newest first, " +
          "each with a freshly signed download link; limit default 20."
      ))
  )
  .add(
    HttpApiEndpoint.get("usage")`/console/api/workspaces/${workspaceId}/usage`
      .setUrlParams(UsageQuery)
      .addSuccess(Schema.Struct({ data: Schema.Array(UsageRow) }))
      .addError(consoleErrors(400))
      .annotateContext(doc(
        "Read API usage per day",
        "Forwarded API requests per local day (`from` inclusive, `to` exclusive, in `timezone`) and group (model, apiKey or family)."
      ))
  )
  .add(
    HttpApiEndpoint.get("activity")`/console/api/workspaces/${workspaceId}/activity`
      .setUrlParams(Schema.Struct({ from: LocalDate, to: LocalDate, timezone: Schema.optional(TimeZone) }))
      .addSuccess(Schema.Struct({ data: Schema.Array(ActivityRow) }))
      .addError(consoleErrors(400))
      .annotateContext(doc("Read platform activity per day", "Platform activity per local day: messages, distinct active users, tokens."))
  )
  .add(
    HttpApiEndpoint.get("listMembers")`/console/api/workspaces/${workspaceId}/members`
      .addSuccess(Schema.Struct({ data: Schema.Array(MemberView) }))
      .annotateContext(doc("List members", "The workspace's members and pending invitations, with their roles."))
  )
  .add(
    HttpApiEndpoint.post("inviteMember")`/console/api/workspaces/${workspaceId}/members`
      .setPayload(InviteMember)
      .addSuccess(InvitedMember, { status: 201 })
      .addError(refusedBody)
      .annotateContext(doc("Invite a member", "Admins only. Inviting an existing member again gives a fresh link (how a password is reset)."))
      .annotate(RequestExample, { email: "ada@example.com", name: "Ada", role: "member" })
  )
  .add(
    HttpApiEndpoint.patch("changeMember")`/console/api/workspaces/${workspaceId}/members/${memberId}`
      .setPayload(ChangeMember)
      .addSuccess(MemberView)
      .addError(refusedBody)
      .addError(consoleErrors(409))
      .annotateContext(doc("Change a member's role", "Admins only. 409 `last_admin` when it would leave the workspace without an active admin."))
      .annotate(RequestExample, { role: "admin" })
  )
  .add(
    HttpApiEndpoint.del("removeMember")`/console/api/workspaces/${workspaceId}/members/${memberId}`
      .addSuccess(MemberView)
      .addError(consoleErrors(409))
      .annotateContext(doc("Remove a member", "Admins only. The person's sessions end at once; 409 `last_admin` for the last active admin."))
  )
  .add(
    HttpApiEndpoint.get("providerKeys")`/console/api/workspaces/${workspaceId}/provider-keys`
      .addSuccess(Schema.Struct({ data: Schema.Array(ConsoleProviderKey) }))
      .annotateContext(doc("List provider keys", "Per provider whether the workspace brings its own key; admins also see its details."))
  )
  .add(
    HttpApiEndpoint.put("setProviderKey")`/console/api/workspaces/${workspaceId}/provider-keys/${provider}`
      .setPayload(SetProviderKey)
      .addSuccess(ConsoleProviderKey)
      .addError(refusedBody)
      .addError(consoleErrors(409, 502))
      .annotateContext(doc(
        "Check and set a provider key",
        "Admins only: the admin API's rules (checked with the provider first: 400 when refused, 502 when it cannot be asked; " +
          "409 when the service has no CREDENTIALS_KEY)."
      ))
      .annotate(RequestExample, { apiKey: "sk-workspace-own-key-0123456789" })
  )
  .add(
    HttpApiEndpoint.del("removeProviderKey")`/console/api/workspaces/${workspaceId}/provider-keys/${provider}`
      .addSuccess(ConsoleProviderKey)
      // 400: a provider the service does not know.
      .addError(consoleErrors(400))
      .annotateContext(doc("Remove a provider key", "Admins only: the workspace's requests go with the service's key again."))
  )
  .add(
    HttpApiEndpoint.get("settings")`/console/api/workspaces/${workspaceId}/settings`
      .addSuccess(ConsoleSettings)
      .annotateContext(doc("Read the settings", "The workspace's settings and the rate limits in force, with what remains of each now."))
  )
  .add(
    HttpApiEndpoint.patch("updateSettings")`/console/api/workspaces/${workspaceId}/settings`
      .setPayload(WorkspaceSettingsPatch)
      .addSuccess(ConsoleSettings)
      .addError(refusedBody)
      .annotateContext(doc("Change the settings", "Admins only: the settings given change, the others stay."))
      .annotate(RequestExample, { timezone: "Europe/Berlin", leaderboardsEnabled: true })
  )
  .add(
    HttpApiEndpoint.get("audit")`/console/api/workspaces/${workspaceId}/audit`
      .setUrlParams(Schema.Struct({ action: Schema.optional(Schema.String), ...PageParams }))
      .addSuccess(AuditPageView)
      .addError(consoleErrors(400))
      .annotateContext(doc("Read the audit log", "Admins only: changes to the workspace, newest first; `action` filters, `limit` and `cursor` page."))
  )
  // 403 a role that does not allow the call, 404 a workspace (or key, member) not found or not the caller's, 503 the database down.
  .addError(consoleErrors(403, 404, 503))
  .middleware(ConsoleOrigin)
  .middleware(ConsoleAuth)
  .annotate(OperationFamily, families.console)
{}
