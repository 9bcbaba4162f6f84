/** Webhooks: the same shapes in the admin API and the console API. */
import { Schema } from "effect"
import { WebhookEventType } from "../../domain/webhookEvent"
import { strictParse } from "../../domain/workspaceSettings"

export const CreateWebhook = Schema.Struct({
  url: Schema.String.pipe(
    Schema.minLength(1, { message: () => "url must not be empty" }),
    Schema.maxLength(2000, { message: () => "url must be at most 2000 characters" })
  ).annotations({ description: "`https` only; a loopback, private or link-local target is refused (400)." }),
  events: Schema.optional(Schema.Array(WebhookEventType).annotations({
    description: "The event types to receive; left out or empty: every type."
  }))
}).annotations({ identifier: "CreateWebhook", ...strictParse })

export const WebhookView = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  createdAt: Schema.String
}).annotations({ identifier: "Webhook" })

export const CreatedWebhook = Schema.Struct({
  ...WebhookView.fields,
  secret: Schema.String.annotations({
    description: "The signing secret (`whsec_…`, Standard Webhooks). Shown only in this response; store it now."
  })
}).annotations({ identifier: "CreatedWebhook" })

export const WebhookDeliveryView = Schema.Struct({
  eventId: Schema.String.annotations({ description: "The event's id: the `webhook-id` header of every attempt." }),
  type: Schema.String,
  attempt: Schema.Int,
  status: Schema.Literal("pending", "delivered", "failed", "abandoned").annotations({
    description: "pending: the attempt to come (`at`: when it is due); failed: another attempt will come; abandoned: none will."
  }),
  at: Schema.String,
  responseStatus: Schema.NullOr(Schema.Int).annotations({ description: "The receiver's HTTP status, when it answered." }),
  error: Schema.optional(Schema.String)
}).annotations({ identifier: "WebhookDelivery" })

export const WebhookDeliveries = Schema.Struct({ data: Schema.Array(WebhookDeliveryView) })
