// The admin API and the console answer the same service errors with the same words, in the same body
// ({ error: { code, message, field? } }): mapped once here, each handler wraps the fields in its own error class.
import type { StorageFailure } from "../platform/StorageFailure"
import type { ApiKeyNotFound, KeyExpiryInPast } from "../services/identity/ApiKeys"
import type { LastAdmin, MemberNotFound } from "../services/people/Members"
import type { CredentialsKeyMissing } from "../services/providerKeys/ProviderCredentials"
import type { ProviderKeyRejected, ProviderKeyUncheckable, ProviderKeyUnroutable } from "../services/providerKeys/ProviderKeyCheck"
import type { InvalidUsageRange } from "../services/usage/4-UsageOverview"
import type { WorkspaceNotFound } from "../services/workspaces/Workspaces"
import type { WebhookNotFound } from "../services/webhooks/Webhooks"
import type { WebhookTargetRefused } from "../services/webhooks/WebhookSender"

/** What a client is told: the fields of an admin or console error. */
export interface ErrorFields {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly field?: string
}

/** Why a provider key was not saved. */
export type ProviderKeyRefusal = CredentialsKeyMissing | ProviderKeyRejected | ProviderKeyUnroutable | ProviderKeyUncheckable

/** The service errors the admin API and the console both answer. */
export type ServiceError =
  | WorkspaceNotFound
  | ApiKeyNotFound
  | KeyExpiryInPast
  | MemberNotFound
  | LastAdmin
  | InvalidUsageRange
  | ProviderKeyRefusal
  | WebhookNotFound
  | WebhookTargetRefused
  | StorageFailure

export const serviceErrorFields = (error: ServiceError): ErrorFields => {
  switch (error._tag) {
    case "WorkspaceNotFound":
      return { status: 404, code: "workspace_not_found", message: `No workspace with id ${error.id}.` }
    case "ApiKeyNotFound":
      return { status: 404, code: "api_key_not_found", message: `No API key with id ${error.id} in this workspace.` }
    case "KeyExpiryInPast":
      return {
        status: 400,
        code: "invalid_value",
        message: `expiresAt ${error.expiresAt.toISOString()} is in the past: a key must expire in the future.`,
        field: "expiresAt"
      }
    case "MemberNotFound":
      return { status: 404, code: "member_not_found", message: `No member with id ${error.id} in this workspace.` }
    case "LastAdmin":
      return { status: 409, code: "last_admin", message: "This is the workspace's last active admin: make another member admin first." }
    case "InvalidUsageRange":
      return { status: 400, code: "invalid_date_range", message: error.message, field: error.field }
    case "CredentialsKeyMissing":
    case "ProviderKeyRejected":
    case "ProviderKeyUnroutable":
    case "ProviderKeyUncheckable":
      return providerKeyRefusal(error)
    case "WebhookNotFound":
      return { status: 404, code: "webhook_not_found", message: `No webhook with id ${error.id} in this workspace.` }
    case "WebhookTargetRefused":
      return { status: 400, code: "invalid_webhook_url", message: error.reason, field: "url" }
    case "StorageFailure":
      return { status: 503, code: "unavailable", message: "The database is unavailable. Retry shortly." }
  }
}

const providerKeyRefusal = (error: ProviderKeyRefusal): ErrorFields => {
  switch (error._tag) {
    case "CredentialsKeyMissing":
      return {
        status: 409,
        code: "credentials_key_missing",
        message: "This service has no CREDENTIALS_KEY, so it cannot store provider keys. The operator must set CREDENTIALS_KEY " +
          "(32 bytes, base64 or hex) and restart the service."
      }
    case "ProviderKeyRejected":
      return {
        status: 400,
        code: "provider_key_rejected",
        message: `${error.provider} refused this key (${error.reason}). It was not saved.`,
        field: "apiKey"
      }
    case "ProviderKeyUnroutable":
      return {
        status: 400,
        code: "provider_key_unusable",
        message: `No route of ${error.provider} has a native deployment (the provider's own API), and a workspace's own key is ` +
          "sent to native deployments only, never to a cloud's. It was not saved: the operator must add a native deployment " +
          "of the provider to the routes file first."
      }
    case "ProviderKeyUncheckable":
      return {
        status: 502,
        code: "provider_unreachable",
        message: `${error.provider} could not be asked to check the key (${error.reason}). It was not saved; retry shortly.`
      }
  }
}
