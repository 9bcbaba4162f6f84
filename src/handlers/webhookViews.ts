import type { DeliveryLine, StoredWebhook } from "../services/webhooks/WebhookStore/index"

/** A webhook as the admin API and the console show it: never its secret. */
export const webhookView = (w: StoredWebhook) => ({ id: w.id, url: w.url, events: w.events, createdAt: w.createdAt.toISOString() })

/** The one answer that carries the secret: the creation's. */
export const createdWebhookView = (w: StoredWebhook) => ({ ...webhookView(w), secret: w.secret })

export const deliveryView = (line: DeliveryLine) => ({
  eventId: line.eventId,
  type: line.type,
  attempt: line.attempt,
  status: line.status,
  at: line.at.toISOString(),
  responseStatus: line.responseStatus,
  ...(line.error === null ? {} : { error: line.error })
})
