import { Duration, Effect, Layer } from "effect"
import { defaultDeliveryOptions, type DeliveryOptions, makeWebhookDelivery } from "../../src/services/webhooks/WebhookDelivery"
import { Webhooks } from "../../src/services/webhooks/Webhooks"
import { type SenderOptions, WebhookSender } from "../../src/services/webhooks/WebhookSender"
import type { WebhookStore } from "../../src/services/webhooks/WebhookStore/index"
import type { Workspaces } from "../../src/services/workspaces/Workspaces"
import { startWebhookReceiver, type WebhookReceiver } from "./webhookReceiver"

/** Retries in milliseconds rather than hours, and a store asked often: the delivery schedule at test speed. */
export const fastDelivery: DeliveryOptions = {
  ...defaultDeliveryOptions,
  retryDelays: [Duration.millis(50), Duration.millis(50), Duration.millis(50)],
  pollEvery: Duration.millis(20),
  lease: Duration.seconds(5)
}

/** The system's resolver, every address allowed (the receiver is on loopback), a short timeout. */
export const localSender: SenderOptions = {
  allowPrivate: true,
  resolve: (host) => Effect.succeed(host === "localhost" ? ["127.0.0.1"] : []),
  timeout: Duration.seconds(2)
}

/** The Webhooks service and its background sender over the given stores: one instance of the service's webhook side. */
export const webhookStack = <E, R>(
  stores: Layer.Layer<WebhookStore | Workspaces, E, R>,
  sender: SenderOptions = localSender,
  delivery: DeliveryOptions = fastDelivery
) =>
  Layer.merge(Webhooks.layer, makeWebhookDelivery(delivery)).pipe(
    Layer.provide(Layer.succeed(WebhookSender, WebhookSender.make(sender))),
    Layer.provideMerge(stores)
  )

/** A receiver for the test's scope. */
export const webhookReceiver = (statuses: ReadonlyArray<number | "hang"> = []): Effect.Effect<WebhookReceiver, never, import("effect").Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => startWebhookReceiver(statuses)), (receiver) => Effect.promise(receiver.close))
