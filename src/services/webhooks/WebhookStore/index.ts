import { Context, Layer } from "effect"
import type { WebhookStoreShape } from "./contract"
import { makeMemoryWebhookStore } from "./memory"
import { makePostgresWebhookStore } from "./postgres"

export * from "./contract"

/** Webhooks, their events and deliveries: see ./contract.ts. */
export class WebhookStore extends Context.Tag("WebhookStore")<WebhookStore, WebhookStoreShape>() {
  static readonly layer = Layer.effect(WebhookStore, makePostgresWebhookStore)

  /** For tests and the in-memory app: one process's deliveries. */
  static readonly memory = Layer.effect(WebhookStore, makeMemoryWebhookStore)
}
