import { Clock, Duration, Effect, Layer } from "effect"
import { forkSpacedRounds } from "../../platform/spacedRounds"
import { webhookSignature } from "../../domain/webhookSignature"
import { WebhookSender } from "./WebhookSender"
import { type ClaimedDelivery, WebhookStore } from "./WebhookStore/index"

export interface DeliveryOptions {
  /** The wait before each retry: the first after attempt 1 fails, and so on; when they run out, the delivery is abandoned. */
  readonly retryDelays: ReadonlyArray<Duration.Duration>
  /** How often the store is asked for due deliveries. */
  readonly pollEvery: Duration.Duration
  /** How long a claimed delivery is held before another sender may take it (longer than an attempt may take). */
  readonly lease: Duration.Duration
  /** Deliveries claimed at a time; they are sent together. */
  readonly batch: number
}

/** Eight attempts over about 31 hours: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 14 h after the failures before them. */
export const defaultDeliveryOptions: DeliveryOptions = {
  retryDelays: [
    Duration.seconds(5),
    Duration.minutes(5),
    Duration.minutes(30),
    Duration.hours(2),
    Duration.hours(5),
    Duration.hours(10),
    Duration.hours(14)
  ],
  pollEvery: Duration.seconds(1),
  lease: Duration.minutes(1),
  batch: 16
}

/**
 * The background sender: every `pollEvery` it claims the due deliveries (across instances, each is
 * claimed by one: ./WebhookStore), signs and sends each, and records the attempt with the next one's time.
 * Headers per the Standard Webhooks specification: `webhook-id` is the event's id on every attempt,
 * `webhook-timestamp` the attempt's time, `webhook-signature` over both and the body.
 */
export const makeWebhookDelivery = (options: DeliveryOptions) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const store = yield* WebhookStore
    const sender = yield* WebhookSender
    const attempt = (delivery: ClaimedDelivery) =>
      Effect.gen(function*() {
        const seconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const result = yield* Effect.either(sender.send({
          url: delivery.url,
          body: delivery.body,
          headers: {
            "content-type": "application/json",
            "user-agent": "workspace-api-webhooks",
            "webhook-id": delivery.eventId,
            "webhook-timestamp": String(seconds),
            "webhook-signature": webhookSignature(delivery.secret, delivery.eventId, seconds, delivery.body)
          }
        }))
        const at = yield* Clock.currentTimeMillis
        const delay = options.retryDelays[delivery.attempt - 1]
        yield* store.recordAttempt(delivery, result._tag === "Right"
          ? { at: new Date(at), delivered: true, responseStatus: result.right, error: null, retryAt: null }
          : {
            at: new Date(at),
            delivered: false,
            responseStatus: result.left.responseStatus,
            error: result.left.reason,
            retryAt: delay === undefined ? null : new Date(at + Duration.toMillis(delay))
          })
      })
    const round = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const due = yield* store.claimDue(new Date(now), new Date(now + Duration.toMillis(options.lease)), options.batch)
      yield* Effect.forEach(due, attempt, { concurrency: "unbounded", discard: true })
    }).pipe(
      // The database away for a while: the next round tries again.
      Effect.catchAll((failure) => Effect.logWarning("webhook deliveries could not be read or recorded", failure.cause))
    )
    yield* forkSpacedRounds(round, options.pollEvery)
  }))

/** The service's sender, with the default schedule. */
export const WebhookDeliveryLive = makeWebhookDelivery(defaultDeliveryOptions)
