import { Effect, Option, Ref } from "effect"
import * as crypto from "node:crypto"
import type { AttemptOutcome, ClaimedDelivery, DeliveryLine, StoredWebhook, WebhookStoreShape } from "./contract"

interface Delivery {
  readonly webhookId: string
  readonly eventId: string
  readonly state: "pending" | "delivered" | "abandoned"
  readonly attempts: number
  readonly nextAt: Date
}

interface Attempt {
  readonly seq: number
  readonly webhookId: string
  readonly eventId: string
  readonly attempt: number
  readonly at: Date
  readonly outcome: "delivered" | "failed" | "abandoned"
  readonly responseStatus: number | null
  readonly error: string | null
}

interface State {
  readonly webhooks: ReadonlyArray<StoredWebhook>
  readonly events: ReadonlyMap<string, { readonly type: string; readonly body: string }>
  readonly deliveries: ReadonlyArray<Delivery>
  readonly attempts: ReadonlyArray<Attempt>
}

const sameDelivery = (a: Pick<Delivery, "webhookId" | "eventId">, b: Pick<Delivery, "webhookId" | "eventId">) =>
  a.webhookId === b.webhookId && a.eventId === b.eventId

/** The store in one Ref: the PostgreSQL backing's behaviour for one process (test/contracts/webhookStore.ts holds both to it). */
export const makeMemoryWebhookStore: Effect.Effect<WebhookStoreShape> = Effect.map(
  Ref.make<State>({ webhooks: [], events: new Map(), deliveries: [], attempts: [] }),
  (state): WebhookStoreShape => ({
    create: (webhook) =>
      Ref.modify(state, (s) => {
        const stored: StoredWebhook = { ...webhook, id: crypto.randomUUID(), createdAt: new Date() }
        return [stored, { ...s, webhooks: [...s.webhooks, stored] }]
      }),
    list: (workspaceId) => Effect.map(Ref.get(state), (s) => s.webhooks.filter((w) => w.workspaceId === workspaceId)),
    remove: (workspaceId, webhookId) =>
      Ref.modify(state, (s) => {
        const removed = s.webhooks.find((w) => w.workspaceId === workspaceId && w.id === webhookId)
        if (removed === undefined) return [Option.none(), s]
        return [Option.some(removed), {
          ...s,
          webhooks: s.webhooks.filter((w) => w !== removed),
          deliveries: s.deliveries.filter((d) => d.webhookId !== webhookId),
          attempts: s.attempts.filter((a) => a.webhookId !== webhookId)
        }]
      }),
    deliveries: (workspaceId, webhookId, limit) =>
      Effect.map(Ref.get(state), (s) => {
        if (!s.webhooks.some((w) => w.workspaceId === workspaceId && w.id === webhookId)) return Option.none()
        const typeOf = (eventId: string) => s.events.get(eventId)?.type ?? ""
        const lines: ReadonlyArray<DeliveryLine & { readonly seq: number }> = [
          ...s.deliveries.filter((d) => d.webhookId === webhookId && d.state === "pending").map((d) => ({
            eventId: d.eventId,
            type: typeOf(d.eventId),
            attempt: d.attempts + 1,
            status: "pending" as const,
            at: d.nextAt,
            responseStatus: null,
            error: null,
            seq: 0
          })),
          ...s.attempts.filter((a) => a.webhookId === webhookId).map((a) => ({
            eventId: a.eventId,
            type: typeOf(a.eventId),
            attempt: a.attempt,
            status: a.outcome,
            at: a.at,
            responseStatus: a.responseStatus,
            error: a.error,
            seq: a.seq
          }))
        ]
        return Option.some(
          [...lines].sort((a, b) => b.at.getTime() - a.at.getTime() || b.seq - a.seq).slice(0, limit)
            .map(({ seq: _seq, ...line }) => line)
        )
      }),
    enqueue: (event, at) =>
      Ref.modify(state, (s) => {
        if (s.events.has(event.id)) return [false, s]
        const queued = s.webhooks
          .filter((w) => w.workspaceId === event.workspaceId && w.events.includes(event.type))
          .map((w): Delivery => ({ webhookId: w.id, eventId: event.id, state: "pending", attempts: 0, nextAt: at }))
        return [true, {
          ...s,
          events: new Map(s.events).set(event.id, { type: event.type, body: event.body }),
          deliveries: [...s.deliveries, ...queued]
        }]
      }),
    claimDue: (now, leaseUntil, limit) =>
      Ref.modify(state, (s) => {
        const due = s.deliveries
          .filter((d) => d.state === "pending" && d.nextAt.getTime() <= now.getTime())
          .sort((a, b) => a.nextAt.getTime() - b.nextAt.getTime())
          .slice(0, limit)
        const claimed = due.flatMap((d): ReadonlyArray<ClaimedDelivery> => {
          const webhook = s.webhooks.find((w) => w.id === d.webhookId)
          const event = s.events.get(d.eventId)
          return webhook === undefined || event === undefined ? [] : [{
            webhookId: d.webhookId,
            eventId: d.eventId,
            attempt: d.attempts + 1,
            url: webhook.url,
            secret: webhook.secret,
            type: event.type,
            body: event.body
          }]
        })
        return [claimed, {
          ...s,
          deliveries: s.deliveries.map((d) =>
            due.includes(d) ? { ...d, attempts: d.attempts + 1, nextAt: leaseUntil } : d
          )
        }]
      }),
    recordAttempt: (delivery: ClaimedDelivery, outcome: AttemptOutcome) =>
      Ref.update(state, (s): State => {
        const current = s.deliveries.find((d) => sameDelivery(d, delivery))
        if (current === undefined) return s
        const ours = current.attempts === delivery.attempt
        const state: Delivery["state"] = outcome.delivered ? "delivered" : outcome.retryAt === null ? "abandoned" : "pending"
        return {
          ...s,
          deliveries: ours
            ? s.deliveries.map((d) => (d === current ? { ...d, state, nextAt: outcome.retryAt ?? outcome.at } : d))
            : s.deliveries,
          attempts: [...s.attempts, {
            seq: s.attempts.length + 1,
            webhookId: delivery.webhookId,
            eventId: delivery.eventId,
            attempt: delivery.attempt,
            at: outcome.at,
            outcome: outcome.delivered ? "delivered" : ours && outcome.retryAt === null ? "abandoned" : "failed",
            responseStatus: outcome.responseStatus,
            error: outcome.error
          }]
        }
      })
  })
)
