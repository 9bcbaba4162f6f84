import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Scope } from "../domain/apiKey"
import { Budget } from "../domain/budgets"
import { ProviderIdSchema } from "../domain/providerIdSchema"
import { strictParse, WorkspaceSettings, WorkspaceSettingsPatch } from "../domain/workspaceSettings"
import { adminErrors } from "./errors/adminError"
import { withoutNul } from "../domain/fieldSchemas"
import { IngestEventsPayload, MAX_EVENTS_PER_BATCH } from "./schemas/events"
import { exportRequestExample } from "./exportsApi"
import { OperationFamily, RequestExample } from "./openapi/annotations"
import { families } from "./openapi/families"
import { AdminAuth } from "./security"
import { AuditPageView, ChangeMember, InvitedMember, InviteMember, MemberView, PasswordResetLinkView, PasswordResetRequest } from "./schemas/members"
import { ProviderKeyView, RotationResultView, SetProviderKey } from "./schemas/providerKeys"
import { UpstreamsView } from "./schemas/upstreams"
import { CreatedWebhook, CreateWebhook, WebhookDeliveries, WebhookView } from "./schemas/webhooks"
import { StrictUsageExportRequest, UsageExportDataType, UsageExportResult } from "./schemas/usageExport"

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
  lastUsedAt: Schema.NullOr(Schema.String),
  budget: Schema.NullOr(Budget),
  spentUsd: Schema.NullOr(Schema.Number).annotations({
    description: "Spent in the budget's current period (null without a budget, or while the budget store cannot be read)"
  }),
  expiresAt: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ApiKey" })

/** An instant with its offset (`2026-12-31T23:59:59Z`, `…+01:00`): a key's expiry. */
export const ExpiryTime = Schema.String.pipe(
  Schema.filter((text) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text) && !Number.isNaN(Date.parse(text)), {
    message: () => "expiresAt must be an ISO 8601 time with its offset, such as 2026-12-31T23:59:59Z"
  })
)

/** A key's budget and expiry, at creation or changed: null removes one, absent leaves it. */
export const KeyLimitsFields = {
  budget: Schema.optional(Schema.NullOr(Budget)),
  expiresAt: Schema.optional(Schema.NullOr(ExpiryTime))
}

export const UpdateApiKey = Schema.Struct(KeyLimitsFields).annotations({ identifier: "UpdateApiKey", ...strictParse })

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
const provider = HttpApiSchema.param("provider", ProviderIdSchema)
const webhookId = HttpApiSchema.param("webhookId", Schema.String)
const PageParams = {
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 200))),
  cursor: Schema.optional(Schema.String)
}

/** A body refused before the handler: not the payload (400), too large (413), not JSON (415). */
const refusedBody = adminErrors(400, 413, 415)
/** A path naming a workspace (or something in it) that does not exist. */
const notFound = adminErrors(404)
const doc = (summary: string, description: string) => OpenApi.annotations({ summary, description })

/** Operator API behind ADMIN_TOKEN: workspaces, their keys, and platform activity ingestion. */
export class AdminApi extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.get("listWorkspaces", "/admin/workspaces")
      .setUrlParams(Schema.Struct({ search: Schema.optional(Schema.String), ...PageParams }))
      .addSuccess(Schema.Struct({ data: Schema.Array(WorkspaceView), nextCursor: Schema.NullOr(Schema.String) }))
      .addError(adminErrors(400))
      .annotateContext(doc(
        "List workspaces",
        "Newest first. `search`: part of the name (case-insensitive) or a whole id. `limit` 1–200 (50)."
      ))
  )
  .add(
    HttpApiEndpoint.post("createWorkspace", "/admin/workspaces")
      // Strict: an unknown top-level key (`setings`) is a 400, not a silent no-op.
      .setPayload(Schema.Struct({ name: Name, settings: Schema.optional(WorkspaceSettingsPatch) }).annotations(strictParse))
      .addSuccess(WorkspaceView, { status: 201 })
      .addError(refusedBody)
      .annotateContext(doc(
        "Create a workspace",
        "A name and, optionally, settings (anything left out takes its default). An unknown field is refused with 400."
      ))
      .annotate(RequestExample, { name: "Research team", settings: { timezone: "Europe/Berlin" } })
  )
  .add(
    HttpApiEndpoint.get("getWorkspace")`/admin/workspaces/${workspaceId}`
      .addSuccess(WorkspaceView)
      .addError(notFound)
      .annotateContext(doc("Get a workspace", "The workspace with its settings."))
  )
  .add(
    HttpApiEndpoint.patch("updateWorkspace")`/admin/workspaces/${workspaceId}`
      .setPayload(
        Schema.Struct({ name: Schema.optional(Name), settings: Schema.optional(WorkspaceSettingsPatch) }).annotations(strictParse)
      )
      .addSuccess(WorkspaceView)
      .addError(refusedBody)
      .addError(notFound)
      .annotateContext(doc(
        "Change a workspace",
        "Renames the workspace and/or changes the settings given (the others stay). Audited as `settings.changed`."
      ))
      .annotate(RequestExample, { settings: { anonymizeUsers: true } })
  )
  .add(
    HttpApiEndpoint.post("createApiKey")`/admin/workspaces/${workspaceId}/api-keys`
      .setPayload(Schema.Struct({
        name: Name,
        scopes: Schema.NonEmptyArray(Scope).annotations({
          message: () => "scopes must be a non-empty list of USAGE_EXPORT_API and/or COMPLETION_API"
        }),
        ...KeyLimitsFields
      }).annotations(strictParse))
      .addSuccess(CreatedApiKey, { status: 201 })
      .addError(refusedBody)
      .addError(notFound)
      .annotateContext(doc(
        "Create an API key",
        "A key of the workspace with the given scopes: COMPLETION_API for the forwarded endpoints, USAGE_EXPORT_API for " +
          "the usage exports; optionally a `budget` of its own and an `expiresAt` (in the future). The key itself is in this answer only."
      ))
      .annotate(RequestExample, { name: "CI exports", scopes: ["USAGE_EXPORT_API"] })
  )
  .add(
    HttpApiEndpoint.get("listApiKeys")`/admin/workspaces/${workspaceId}/api-keys`
      .addSuccess(Schema.Struct({ data: Schema.Array(ApiKeyView) }))
      .addError(notFound)
      .annotateContext(doc("List API keys", "Every key of the workspace, revoked ones included; never the keys themselves."))
  )
  .add(
    HttpApiEndpoint.patch("updateApiKey")`/admin/workspaces/${workspaceId}/api-keys/${keyId}`
      .setPayload(UpdateApiKey)
      .addSuccess(ApiKeyView)
      .addError(refusedBody)
      .addError(notFound)
      .annotateContext(doc(
        "Change an API key's budget or expiry",
        "`budget` ({ amountUsd, period, alertThresholds? }) or null to remove it; `expiresAt` or null to remove it. Audited as `api_key.changed`."
      ))
      .annotate(RequestExample, { budget: { amountUsd: 50, period: "month", alertThresholds: [0.8, 1] } })
  )
  .add(
    HttpApiEndpoint.del("revokeApiKey")`/admin/workspaces/${workspaceId}/api-keys/${keyId}`
      .addSuccess(ApiKeyView)
      .addError(notFound)
      .annotateContext(doc("Revoke an API key", "The key is refused from now on (401). Audited as `api_key.revoked`."))
  )
  .add(
    HttpApiEndpoint.post("ingestEvents")`/admin/workspaces/${workspaceId}/events`
      .setPayload(IngestEventsPayload.annotations(strictParse))
      .addSuccess(IngestEventsResult)
      .addError(refusedBody)
      .addError(notFound)
      .annotateContext(doc(
        "Ingest platform activity",
        `Ingests platform activity (message and workflow_run events), at most ${MAX_EVENTS_PER_BATCH} per request. ` +
          "All or nothing: the first bad event rejects the batch with 400 naming it (field `events[17].occurredAt`) " +
          "and nothing is written. Idempotent by event id: events the workspace already sent are counted as duplicates."
      ))
      .annotate(RequestExample, {
        events: [{
          type: "message",
          id: "msg_0001",
          occurredAt: "2026-01-15T09:30:00Z",
          user: { id: "user_42", email: "ada@example.com", name: "Ada" },
          assistant: { id: "asst_7", name: "Support assistant" },
          model: "chatgen-4o",
          inputTokens: 1200,
          outputTokens: 350
        }]
      })
  )
  .add(
    HttpApiEndpoint.post("inviteMember")`/admin/workspaces/${workspaceId}/members`
      .setPayload(InviteMember)
      .addSuccess(InvitedMember, { status: 201 })
      .addError(refusedBody)
      .addError(notFound)
      .annotateContext(doc(
        "Invite a member",
        "Invites a person (by email) with a single-use link valid 7 days; inviting the same email again voids the previous " +
          "link. For an email that already has an account, the link only lets that person join (signed in as themselves): " +
          "it never sets, resets or reveals anything of the account, and `name` (a suggestion shown while invited) never " +
          "renames an existing person. Passwords are reset with POST /admin/people/password-reset."
      ))
      .annotate(RequestExample, { email: "ada@example.com", name: "Ada", role: "member" })
  )
  .add(
    HttpApiEndpoint.get("listMembers")`/admin/workspaces/${workspaceId}/members`
      .addSuccess(Schema.Struct({ data: Schema.Array(MemberView) }))
      .addError(notFound)
      .annotateContext(doc("List members", "The workspace's members and pending invitations, with their roles."))
  )
  .add(
    HttpApiEndpoint.patch("changeMember")`/admin/workspaces/${workspaceId}/members/${memberId}`
      .setPayload(ChangeMember)
      .addSuccess(MemberView)
      .addError(refusedBody)
      .addError(adminErrors(404, 409))
      .annotateContext(doc("Change a member's role", "409 `last_admin` when it would leave the workspace without an active admin."))
      .annotate(RequestExample, { role: "admin" })
  )
  .add(
    HttpApiEndpoint.del("removeMember")`/admin/workspaces/${workspaceId}/members/${memberId}`
      .addSuccess(MemberView)
      .addError(adminErrors(404, 409))
      .annotateContext(doc(
        "Remove a member",
        "The person's access to the workspace ends at once (their sessions too, when it was their last workspace). " +
          "409 `last_admin` for the last active admin."
      ))
  )
  .add(
    HttpApiEndpoint.post("passwordReset", "/admin/people/password-reset")
      .setPayload(PasswordResetRequest)
      .addSuccess(PasswordResetLinkView, { status: 201 })
      .addError(refusedBody)
      .addError(notFound)
      .annotateContext(doc(
        "Issue a password-reset link",
        "A one-time link for the person with this email to choose a new password: valid 1 hour, single use; a new " +
          "link voids the outstanding one. Using it sets the password and ends every session of the person. Give it to " +
          "the person only, over a channel you trust: whoever holds it can set the password. 404 `no_account` when no " +
          "account has this email. Audited as `password.reset_link_created` in the person's workspaces."
      ))
      .annotate(RequestExample, { email: "ada@example.com" })
  )
  .add(
    HttpApiEndpoint.put("setProviderKey")`/admin/workspaces/${workspaceId}/provider-keys/${provider}`
      .setPayload(SetProviderKey)
      .addSuccess(ProviderKeyView)
      .addError(refusedBody)
      .addError(adminErrors(404, 409, 502))
      .annotateContext(doc(
        "Set a workspace's own provider key",
        "Saves the workspace's own key for a provider, replacing any previous one. The key is checked with one cheap call to " +
          "the provider first (400 `provider_key_rejected` when refused; 400 `provider_key_unusable` when no route of the " +
          "provider has a native deployment, the only kind a workspace's own key goes to; 502 when the provider cannot be " +
          "asked) and stored " +
          "encrypted under CREDENTIALS_KEY (409 `credentials_key_missing` when the service has none). From then on every " +
          "request of the workspace to that provider goes upstream with this key. The key is never shown again."
      ))
      .annotate(RequestExample, { apiKey: "sk-workspace-own-key-0123456789" })
  )
  .add(
    HttpApiEndpoint.get("listProviderKeys")`/admin/workspaces/${workspaceId}/provider-keys`
      .addSuccess(Schema.Struct({ data: Schema.Array(ProviderKeyView) }))
      .addError(notFound)
      .annotateContext(doc("List a workspace's provider keys", "Which providers the workspace brings its own key for: the last four characters, never the key."))
  )
  .add(
    HttpApiEndpoint.del("removeProviderKey")`/admin/workspaces/${workspaceId}/provider-keys/${provider}`
      .addSuccess(ProviderKeyView)
      // 400: a provider the service does not know.
      .addError(adminErrors(400, 404))
      .annotateContext(doc(
        "Remove a workspace's provider key",
        "The workspace's requests to the provider go with the service's own key again."
      ))
  )
  .add(
    HttpApiEndpoint.post("rotateCredentials", "/admin/provider-keys/rotate")
      .addSuccess(RotationResultView)
      .addError(adminErrors(409))
      .annotateContext(doc(
        "Re-encrypt the stored provider keys",
        "Re-encrypts every stored provider key under CREDENTIALS_KEY, opening those of the previous key with " +
          "CREDENTIALS_KEY_PREVIOUS. Run it after restarting with the new key and the old one as CREDENTIALS_KEY_PREVIOUS; " +
          "once it reports nothing unreadable, CREDENTIALS_KEY_PREVIOUS can go."
      ))
  )
  .add(
    HttpApiEndpoint.post("runExport")`/admin/workspaces/${workspaceId}/exports/${HttpApiSchema.param("dataType", UsageExportDataType)}`
      .setPayload(StrictUsageExportRequest)
      .addSuccess(UsageExportResult)
      .addError(refusedBody)
      .addError(adminErrors(404, 429, 500))
      .annotateContext(doc(
        "Run a usage export as the operator",
        "Runs a usage export as the operator, without an API key of the workspace: the public export's answer, same " +
          "rules and errors; counts against the workspace's usage-export rate limit; audited as `export.run`."
      ))
      .annotate(RequestExample, exportRequestExample)
  )
  .add(
    HttpApiEndpoint.get("audit")`/admin/workspaces/${workspaceId}/audit`
      .setUrlParams(Schema.Struct({ action: Schema.optional(Schema.String), ...PageParams }))
      .addSuccess(AuditPageView)
      .addError(adminErrors(400, 404))
      .annotateContext(doc(
        "Read a workspace's audit log",
        "Changes to the workspace (by the operator, in the console, through the admin API), newest first; `action` filters, " +
          "`limit` 1–200 (50) and `cursor` page."
      ))
  )
  .add(
    HttpApiEndpoint.post("createWebhook")`/admin/workspaces/${workspaceId}/webhooks`
      .setPayload(CreateWebhook)
      .addSuccess(CreatedWebhook, { status: 201 })
      .addError(refusedBody)
      .addError(notFound)
      .annotateContext(doc(
        "Add a webhook",
        "The workspace's events (`budget.threshold_reached`) are POSTed to the URL, signed per the Standard Webhooks " +
          "specification with the secret in this answer (shown only here), and retried with backoff for more than a day. " +
          "The URL must be `https` and must not point at a loopback, private or link-local address (400 `invalid_webhook_url`, " +
          "field `url`), unless the service runs with WEBHOOKS_ALLOW_PRIVATE_ADDRESSES=true. Audited as `webhook.created`."
      ))
      .annotate(RequestExample, { url: "https://hooks.example.com/workspace-api", events: ["budget.threshold_reached"] })
  )
  .add(
    HttpApiEndpoint.get("listWebhooks")`/admin/workspaces/${workspaceId}/webhooks`
      .addSuccess(Schema.Struct({ data: Schema.Array(WebhookView) }))
      .addError(notFound)
      .annotateContext(doc("List webhooks", "The workspace's webhooks, oldest first; never their secrets."))
  )
  .add(
    HttpApiEndpoint.del("removeWebhook")`/admin/workspaces/${workspaceId}/webhooks/${webhookId}`
      .addSuccess(WebhookView)
      .addError(notFound)
      .annotateContext(doc("Remove a webhook", "Nothing more is sent to it, pending retries included. Audited as `webhook.removed`."))
  )
  .add(
    HttpApiEndpoint.get("webhookDeliveries")`/admin/workspaces/${workspaceId}/webhooks/${webhookId}/deliveries`
      .addSuccess(WebhookDeliveries)
      .addError(notFound)
      .annotateContext(doc(
        "List a webhook's deliveries",
        "Every attempt with its outcome (`delivered`, `failed` with another attempt to come, `abandoned` when none will), " +
          "the receiver's status and the error, and each delivery still to be tried (`pending`, `at` when it is due): " +
          "newest first, at most 100."
      ))
  )
  .add(
    HttpApiEndpoint.get("listUpstreams", "/admin/upstreams")
      .addSuccess(UpstreamsView)
      .annotateContext(doc(
        "List the upstream deployments and how they fare",
        "Every route's deployments (those of the routes file, UPSTREAM_PROVIDER_*, or the built-in simulator) in the " +
          "order they are configured: available or cooling (and until when), the last failure in the service's words, " +
          "and the attempts and failures counted since this instance started. Each instance keeps its own counts and " +
          "cooldowns: behind a load balancer, ask each one."
      ))
  )
  // Every admin operation reads the database: 503 when it is unavailable.
  .addError(adminErrors(503))
  .middleware(AdminAuth)
  .annotate(OperationFamily, families.admin)
{}
