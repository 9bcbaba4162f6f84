import { createHash } from "node:crypto"
import { Schema } from "effect"

/**
 * The events a workspace's webhooks receive (../../docs/webhooks.md). An event's id is decided by what it
 * announces, not by who announces it: every instance that sees a threshold crossed makes the same id, and
 * the store keeps the first (so the event is sent once per threshold, budget and period).
 */

export const webhookEventTypes = ["budget.threshold_reached"] as const
export const WebhookEventType = Schema.Literal(...webhookEventTypes)
export type WebhookEventType = typeof WebhookEventType.Type

export const BudgetThresholdReached = Schema.Struct({
  type: Schema.Literal("budget.threshold_reached"),
  /** When the threshold was reached (ISO 8601). */
  timestamp: Schema.String,
  data: Schema.Struct({
    workspaceId: Schema.String,
    /** null: the workspace's budget; else the API key's. */
    keyId: Schema.NullOr(Schema.String),
    budget: Schema.Struct({
      amountUsd: Schema.Number,
      period: Schema.Literal("day", "week", "month"),
      /** The period's first instant (ISO 8601), midnight in the workspace's time zone. */
      periodStart: Schema.String
    }),
    /** The fraction of the budget reached, e.g. 0.8. */
    threshold: Schema.Number,
    spentUsd: Schema.Number
  })
}).annotations({ identifier: "BudgetThresholdReached" })
export type BudgetThresholdReached = typeof BudgetThresholdReached.Type

export const WebhookEvent = Schema.Union(BudgetThresholdReached).annotations({ identifier: "WebhookEvent" })
export type WebhookEvent = typeof WebhookEvent.Type

/** The same instant however it was written (`…00Z` and `…00.000Z`), so that two instances agree on the id. */
const instant = (text: string): string => {
  const time = Date.parse(text)
  return Number.isNaN(time) ? text : new Date(time).toISOString()
}

/**
 * The event's id (`webhook-id`, the same on every retry): `evt_` and 32 hex digits of a SHA-256 over what
 * makes the event one: for a threshold, the workspace, the key (or none), the period's start and the threshold.
 */
export const webhookEventId = (event: WebhookEvent): string => {
  const { data } = event
  const identity = [event.type, data.workspaceId, data.keyId ?? "-", instant(data.budget.periodStart), String(data.threshold)].join("\n")
  return `evt_${createHash("sha256").update(identity).digest("hex").slice(0, 32)}`
}
