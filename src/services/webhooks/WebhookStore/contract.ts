import type { Effect, Option } from "effect"
import type { WebhookEventType } from "../../../domain/webhookEvent"
import type { StorageFailure } from "../../../platform/StorageFailure"

export interface StoredWebhook {
  readonly id: string
  readonly workspaceId: string
  readonly url: string
  readonly events: ReadonlyArray<WebhookEventType>
  /** `whsec_…`: kept to sign every delivery, shown to the caller only when the webhook is created. */
  readonly secret: string
  readonly createdAt: Date
}

export type NewWebhook = Pick<StoredWebhook, "workspaceId" | "url" | "events" | "secret">

/**
 * One line of a webhook's deliveries: an attempt and its outcome, or a delivery still to be tried
 * (`pending`: `attempt` is the attempt to come, `at` when it is due). `abandoned`: the last attempt
 * failed and there will be no other.
 */
export interface DeliveryLine {
  readonly eventId: string
  readonly type: string
  readonly attempt: number
  readonly status: "pending" | "delivered" | "failed" | "abandoned"
  readonly at: Date
  /** The receiver's HTTP status, when it answered. */
  readonly responseStatus: number | null
  readonly error: string | null
}

/** A delivery claimed for sending: everything the attempt needs. */
export interface ClaimedDelivery {
  readonly webhookId: string
  readonly url: string
  readonly secret: string
  readonly eventId: string
  readonly type: string
  /** The event's JSON, the same bytes on every attempt. */
  readonly body: string
  /** This attempt's number, from 1. */
  readonly attempt: number
}

export interface AttemptOutcome {
  readonly at: Date
  readonly delivered: boolean
  readonly responseStatus: number | null
  readonly error: string | null
  /** When to try again after a failure; null: never (the delivery is abandoned). */
  readonly retryAt: Date | null
}

/**
 * Webhooks, the events announced to them and their deliveries (sql/0019_webhooks.sql). An event is kept
 * once by its id, whoever announces it and however often: the first announcement queues one delivery per
 * webhook of the workspace that takes its type, the others change nothing. Deliveries are claimed for a
 * while (`leaseUntil`), so that two instances never send one at the same time and a crashed sender's
 * delivery is taken up again once its claim runs out.
 */
export interface WebhookStoreShape {
  readonly create: (webhook: NewWebhook) => Effect.Effect<StoredWebhook, StorageFailure>
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<StoredWebhook>, StorageFailure>
  /** The webhook removed (its deliveries with it), if the workspace had it. */
  readonly remove: (workspaceId: string, webhookId: string) => Effect.Effect<Option.Option<StoredWebhook>, StorageFailure>
  /** Newest first, at most `limit`; None when the workspace has no such webhook. */
  readonly deliveries: (
    workspaceId: string,
    webhookId: string,
    limit: number
  ) => Effect.Effect<Option.Option<ReadonlyArray<DeliveryLine>>, StorageFailure>
  /** Keeps the event if its id is new and queues its deliveries, due at `at`; true when it was new. */
  readonly enqueue: (
    event: { readonly id: string; readonly workspaceId: string; readonly type: WebhookEventType; readonly body: string },
    at: Date
  ) => Effect.Effect<boolean, StorageFailure>
  /** Up to `limit` deliveries due at `now`, each claimed until `leaseUntil` and counted as one more attempt. */
  readonly claimDue: (now: Date, leaseUntil: Date, limit: number) => Effect.Effect<ReadonlyArray<ClaimedDelivery>, StorageFailure>
  readonly recordAttempt: (delivery: ClaimedDelivery, outcome: AttemptOutcome) => Effect.Effect<void, StorageFailure>
}
