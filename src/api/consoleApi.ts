import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { Scope } from "../domain/apiKey"
import { type ConsoleActor, MemberRole } from "../domain/console"
import { GivenPassword, NewPassword } from "../domain/password"
import { ProviderIdSchema } from "../domain/providerIdSchema"
import { strictParse, TimeZone, WorkspaceSettings, WorkspaceSettingsPatch } from "../domain/workspaceSettings"
import { ApiKeyView, CreatedApiKey, KeyLimitsFields, UpdateApiKey } from "./adminApi"
import { Budget } from "../domain/budgets"
import { consoleErrors } from "./errors/consoleError"
import { exportRequestExample } from "./exportsApi"
import { OperationFamily, RequestExample } from "./openapi/annotations"
import { families } from "./openapi/families"
import { AuditPageView, ChangeMember, InvitedMember, InviteMember, MemberView } from "./schemas/members"
import { StrictUsageExportRequest, UsageExportDataType, UsageExportResult } from "./schemas/usageExport"
import { SetProviderKey } from "./schemas/providerKeys"
import { UpstreamsView } from "./schemas/upstreams"
import { CreatedWebhook, CreateWebhook, WebhookDeliveries, WebhookView } from "./schemas/webhooks"

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
  Schema.Struct({ email: Schema.String.pipe(Schema.maxLength(320)), password: GivenPassword }),
  Schema.Struct({ adminToken: Schema.String.pipe(Schema.maxLength(1000)) })
).annotations({ identifier: "SignIn", ...strictParse })

/** What an invitation link shows whoever holds it; nothing about whether the email has an account. */
export const InvitationView = Schema.Struct({
  email: Schema.String,
  name: Schema.NullOr(Schema.String).annotations({ description: "The name the inviter suggested (used only when the link creates an account)" }),
  role: MemberRole,
  workspace: Schema.Struct({ id: Schema.String, name: Schema.String }),
  expiresAt: Schema.String
}).annotations({ identifier: "Invitation" })

/**
 * Accepting an invitation, one of three ways: `{ password, name? }` creates the account of an email that has
 * none; `{ currentPassword }` is the invited person signing in on the page; `{}` the invited person already
 * signed in (their session cookie). The answer does not tell which of the first two failed.
 */
export const AcceptInvitation = Schema.Struct({
  password: Schema.optional(NewPassword("password")),
  name: Schema.optional(Name),
  currentPassword: Schema.optional(GivenPassword)
}).annotations({ identifier: "AcceptInvitation", ...strictParse })

export const ChangePassword = Schema.Struct({
  currentPassword: GivenPassword,
  newPassword: NewPassword("newPassword")
}).annotations({ identifier: "ChangePassword", ...strictParse })

export const PasswordResetView = Schema.Struct({ email: Schema.String, expiresAt: Schema.String })
  .annotations({ identifier: "PasswordReset" })
export const ResetPassword = Schema.Struct({ password: NewPassword("password") })
  .annotations({ identifier: "ResetPassword", ...strictParse })

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

/** The workspace's budget in its current period: the Overview's bar. */
export const BudgetStatusView = Schema.Struct({
  budget: Schema.NullOr(Budget),
  /** Null without a budget, or while the budget store cannot be read. */
  spentUsd: Schema.NullOr(Schema.Number),
  reservedUsd: Schema.NullOr(Schema.Number),
  periodStart: Schema.NullOr(Schema.String),
  resetAt: Schema.NullOr(Schema.String)
}).annotations({ identifier: "BudgetStatus" })

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
const provider = HttpApiSchema.param("provider", ProviderIdSchema)
const webhookId = HttpApiSchema.param("webhookId", Schema.String)
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
  // Sessions live in the database: 503 when it is unavailable.
  .addError(consoleErrors(503))
  .middleware(ConsoleOrigin)
  .annotate(OperationFamily, families.console)
{}

/**
 * A person's account: invitations, their own password change, the operator's reset links. No session
 * needed (but the change), the Origin check applies.
 */
export class ConsoleAccountApi extends HttpApiGroup.make("consoleAccount")
  .add(
    HttpApiEndpoint.get("invitation")`/console/api/invitations/${token}`
      .addSuccess(InvitationView)
      .addError(consoleErrors(404, 410))
      .annotateContext(doc(
        "Read an invitation",
        "Whom it invites into which workspace; nothing about the email's account. 404 unknown, 410 used or expired."
      ))
  )
  .add(
    HttpApiEndpoint.post("acceptInvitation")`/console/api/invitations/${token}`
      .setPayload(AcceptInvitation)
      .addSuccess(SessionView)
      .addError(refusedBody)
      .addError(consoleErrors(401, 404, 410, 429))
      .annotateContext(doc(
        "Accept an invitation",
        "`{ password, name? }` creates the account of an email that has none (password: at least 12 characters, not only " +
          "white space) and signs in. For an email that has an account the link never sets, resets or reveals anything: " +
          "the invited person accepts with `{ currentPassword }` (a sign-in, throttled like one) or, signed in as " +
          "themselves, with `{}`. Any other attempt is 401 `invitation_not_accepted`, the same answer whichever it was; " +
          "nothing changes and the link stays usable. 410 when used or expired."
      ))
      .annotate(RequestExample, { password: "correct horse battery staple", name: "Ada" })
  )
  .add(
    HttpApiEndpoint.put("changePassword", "/console/api/session/password")
      .setPayload(ChangePassword)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(refusedBody)
      .addError(consoleErrors(403, 429))
      .middleware(ConsoleAuth)
      .annotateContext(doc(
        "Change my password",
        "The signed-in person's own password: `currentPassword` must be theirs (400 naming it otherwise; failures are " +
          "throttled like sign-ins), `newPassword` at least 12 characters, not only white space. Every other session of " +
          "the person ends; this one stays. 403 for the operator, who has no password."
      ))
      .annotate(RequestExample, { currentPassword: "correct horse battery staple", newPassword: "a new and longer passphrase" })
  )
  .add(
    HttpApiEndpoint.get("passwordReset")`/console/api/password-resets/${token}`
      .addSuccess(PasswordResetView)
      .addError(consoleErrors(404, 410))
      .annotateContext(doc("Read a password-reset link", "Whose password the operator's link resets, and until when (1 hour). 410 when used or expired."))
  )
  .add(
    HttpApiEndpoint.post("resetPassword")`/console/api/password-resets/${token}`
      .setPayload(ResetPassword)
      .addSuccess(SessionView)
      .addError(refusedBody)
      .addError(consoleErrors(404, 410))
      .annotateContext(doc(
        "Reset a password with the operator's link",
        "Sets the password (at least 12 characters, not only white space), uses up the link, ends every session of the " +
          "person and signs in. 410 when used or expired."
      ))
      .annotate(RequestExample, { password: "a new and longer passphrase" })
  )
  // People and links live in the database: 503 when it is unavailable.
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
    HttpApiEndpoint.get("upstreams", "/console/api/upstreams")
      .addSuccess(UpstreamsView)
      .annotateContext(doc(
        "List the upstream deployments and how they fare",
        "Operator only (403 for everyone else): GET /admin/upstreams's answer, this instance's view."
      ))
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
        }),
        ...KeyLimitsFields
      }).annotations(strictParse))
      .addSuccess(ConsoleCreatedApiKey, { status: 201 })
      .addError(refusedBody)
      .annotateContext(doc("Create an API key", "Members may create COMPLETION_API keys only. The key is in this answer only."))
      .annotate(RequestExample, { name: "My laptop", scopes: ["COMPLETION_API"] })
  )
  .add(
    HttpApiEndpoint.patch("updateApiKey")`/console/api/workspaces/${workspaceId}/api-keys/${keyId}`
      .setPayload(UpdateApiKey)
      .addSuccess(ConsoleApiKeyView)
      .addError(refusedBody)
      .annotateContext(doc("Change an API key's budget or expiry", "Admins change any key of the workspace, members only their own."))
      .annotate(RequestExample, { budget: { amountUsd: 20, period: "week" }, expiresAt: "2026-12-31T23:59:59Z" })
  )
  .add(
    HttpApiEndpoint.get("budget")`/console/api/workspaces/${workspaceId}/budget`
      .addSuccess(BudgetStatusView)
      .annotateContext(doc("Read the workspace's budget", "The budget, what its current period has spent and what requests in progress hold."))
  )
  .add(
    HttpApiEndpoint.del("revokeApiKey")`/console/api/workspaces/${workspaceId}/api-keys/${keyId}`
      .addSuccess(ConsoleApiKeyView)
      .annotateContext(doc("Revoke an API key", "Admins revoke any key of the workspace, members only their own."))
  )
  .add(
    HttpApiEndpoint.post("runExport")`/console/api/workspaces/${workspaceId}/exports/${dataType}`
      .setPayload(StrictUsageExportRequest)
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
      .annotateContext(doc(
        "Invite a member",
        "Admins only. The link is the workspace's: for an email that already has an account it only lets that person join, " +
          "signed in as themselves; it never sets, resets or reveals anything of the account, and `name` never renames them."
      ))
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
      .annotateContext(doc(
        "Remove a member",
        "Admins only. The person's access to the workspace ends at once (their sessions too, when it was their last " +
          "workspace); 409 `last_admin` for the last active admin."
      ))
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
    HttpApiEndpoint.get("webhooks")`/console/api/workspaces/${workspaceId}/webhooks`
      .addSuccess(Schema.Struct({ data: Schema.Array(WebhookView) }))
      .annotateContext(doc("List webhooks", "Admins only: the workspace's webhooks, never their secrets."))
  )
  .add(
    HttpApiEndpoint.post("createWebhook")`/console/api/workspaces/${workspaceId}/webhooks`
      .setPayload(CreateWebhook)
      .addSuccess(CreatedWebhook, { status: 201 })
      .addError(refusedBody)
      .annotateContext(doc(
        "Add a webhook",
        "Admins only: the admin API's rules (`https`, no loopback, private or link-local target: 400 `invalid_webhook_url`). " +
          "The signing secret is in this answer only."
      ))
      .annotate(RequestExample, { url: "https://hooks.example.com/workspace-api" })
  )
  .add(
    HttpApiEndpoint.del("removeWebhook")`/console/api/workspaces/${workspaceId}/webhooks/${webhookId}`
      .addSuccess(WebhookView)
      .annotateContext(doc("Remove a webhook", "Admins only: nothing more is sent to it."))
  )
  .add(
    HttpApiEndpoint.get("webhookDeliveries")`/console/api/workspaces/${workspaceId}/webhooks/${webhookId}/deliveries`
      .addSuccess(WebhookDeliveries)
      .annotateContext(doc("List a webhook's deliveries", "Admins only: every attempt and its outcome, and what is still to be tried, newest first."))
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
