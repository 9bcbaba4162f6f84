import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import { type WebhookEvent, webhookEventId, webhookEventTypes, type WebhookEventType } from "../../domain/webhookEvent"
import { generateWebhookSecret } from "../../domain/webhookSignature"
import type { StorageFailure } from "../../platform/StorageFailure"
import { type WorkspaceNotFound, Workspaces } from "../workspaces/Workspaces"
import { WebhookSender, type WebhookTargetRefused } from "./WebhookSender"
import { type DeliveryLine, type StoredWebhook, WebhookStore } from "./WebhookStore/index"

export class WebhookNotFound extends Data.TaggedError("WebhookNotFound")<{ readonly id: string }> {}

/** The most delivery lines a list shows. */
const deliveriesShown = 100

/**
 * A workspace's webhooks and what is announced to them. `publish` is what other services call (the
 * budgets, when a threshold is reached): safe from any number of instances, since the event's id is made
 * from what it announces and the store keeps an id once; the background sender (`WebhookDelivery`)
 * delivers it.
 */
export class Webhooks extends Context.Tag("Webhooks")<Webhooks, {
  /** Announces the event to the workspace's webhooks that take its type; true the first time its id is seen. */
  readonly publish: (workspaceId: string, event: WebhookEvent) => Effect.Effect<boolean, StorageFailure>
  /** A new webhook (`events` left out: every type), with its secret: shown to the caller this once. */
  readonly create: (
    workspaceId: string,
    request: { readonly url: string; readonly events?: ReadonlyArray<WebhookEventType> | undefined }
  ) => Effect.Effect<StoredWebhook, WebhookTargetRefused | WorkspaceNotFound | StorageFailure>
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<StoredWebhook>, WorkspaceNotFound | StorageFailure>
  readonly remove: (workspaceId: string, webhookId: string) => Effect.Effect<StoredWebhook, WebhookNotFound | WorkspaceNotFound | StorageFailure>
  /** The webhook's attempts and pending deliveries, newest first. */
  readonly deliveries: (
    workspaceId: string,
    webhookId: string
  ) => Effect.Effect<ReadonlyArray<DeliveryLine>, WebhookNotFound | WorkspaceNotFound | StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    Webhooks,
    Effect.gen(function*() {
      const store = yield* WebhookStore
      const sender = yield* WebhookSender
      const workspaces = yield* Workspaces
      const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
      return Webhooks.of({
        publish: (workspaceId, event) =>
          Effect.flatMap(now, (at) =>
            store.enqueue({ id: webhookEventId(event), workspaceId, type: event.type, body: JSON.stringify(event) }, at)),
        create: (workspaceId, request) =>
          Effect.gen(function*() {
            yield* workspaces.get(workspaceId)
            const url = yield* sender.checkTarget(request.url)
            const wanted = request.events ?? []
            const events = wanted.length === 0 ? webhookEventTypes : webhookEventTypes.filter((type) => wanted.includes(type))
            return yield* store.create({ workspaceId, url, events, secret: generateWebhookSecret() })
          }),
        list: (workspaceId) => Effect.zipRight(workspaces.get(workspaceId), store.list(workspaceId)),
        remove: (workspaceId, webhookId) =>
          Effect.zipRight(workspaces.get(workspaceId), store.remove(workspaceId, webhookId)).pipe(
            Effect.flatMap(Option.match({ onNone: () => Effect.fail(new WebhookNotFound({ id: webhookId })), onSome: Effect.succeed }))
          ),
        deliveries: (workspaceId, webhookId) =>
          Effect.zipRight(workspaces.get(workspaceId), store.deliveries(workspaceId, webhookId, deliveriesShown)).pipe(
            Effect.flatMap(Option.match({ onNone: () => Effect.fail(new WebhookNotFound({ id: webhookId })), onSome: Effect.succeed }))
          )
      })
    })
  )
}
