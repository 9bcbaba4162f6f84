import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Schedule } from "effect"
import { Webhook } from "standardwebhooks"
import { type BudgetThresholdReached, webhookEventId } from "../../../src/domain/webhookEvent"
import { Webhooks } from "../../../src/services/webhooks/Webhooks"
import { type DeliveryLine, WebhookStore } from "../../../src/services/webhooks/WebhookStore/index"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import { localSender, webhookReceiver, webhookStack } from "../../support/webhookStack"

const memoryStores = Layer.merge(WebhookStore.memory, Workspaces.memory)

const thresholdEvent = (workspaceId: string, threshold = 0.8): BudgetThresholdReached => ({
  type: "budget.threshold_reached",
  timestamp: "2026-11-28T10:15:00.000Z",
  data: {
    workspaceId,
    keyId: null,
    budget: { amountUsd: 100, period: "month", periodStart: "2026-11-01T00:00:00.000Z" },
    threshold,
    spentUsd: 80.25
  }
})

/** The webhook's deliveries once they satisfy `done`: a condition awaited, not a sleep. */
const deliveriesWhen = (workspaceId: string, webhookId: string, done: (lines: ReadonlyArray<DeliveryLine>) => boolean) =>
  Effect.flatMap(Webhooks, (webhooks) => webhooks.deliveries(workspaceId, webhookId)).pipe(
    Effect.filterOrFail(done, () => "not yet"),
    Effect.retry(Schedule.spaced("20 millis"))
  )

/** Once the newest line is the last attempt (delivered or abandoned). */
const settled = (workspaceId: string, webhookId: string) =>
  deliveriesWhen(workspaceId, webhookId, (lines) => lines[0]?.status === "delivered" || lines[0]?.status === "abandoned")

describe("webhook delivery", () => {
  it.scopedLive("signs per Standard Webhooks; a receiver that fails twice gets the same webhook-id three times, listed attempt by attempt", () =>
    Effect.gen(function*() {
      const receiver = yield* webhookReceiver([500, 503])
      const webhooks = yield* Webhooks
      const workspace = yield* Effect.flatMap(Workspaces, (w) => w.create("deliveries", {}))
      const hook = yield* webhooks.create(workspace.id, { url: receiver.url })
      expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(Buffer.from(hook.secret.slice(6), "base64").length).toBeGreaterThanOrEqual(24)
      const event = thresholdEvent(workspace.id)
      expect(yield* webhooks.publish(workspace.id, event)).toBe(true)

      const received = yield* Effect.promise(() => receiver.waitFor(3))
      const ids = received.map((r) => r.headers["webhook-id"])
      expect(ids).toEqual([webhookEventId(event), webhookEventId(event), webhookEventId(event)])
      for (const request of received) {
        // The library a receiver would use: throws unless the signature and timestamp hold.
        expect(new Webhook(hook.secret).verify(request.body, request.headers)).toEqual(event)
        expect(request.headers["content-type"]).toBe("application/json")
      }
      // Under another secret, the same request does not verify.
      expect(() => new Webhook("whsec_" + Buffer.alloc(32, 7).toString("base64")).verify(received[0]!.body, received[0]!.headers)).toThrow()

      const lines = yield* settled(workspace.id, hook.id)
      expect(lines.map((l) => [l.eventId, l.attempt, l.status, l.responseStatus, l.error])).toEqual([
        [webhookEventId(event), 3, "delivered", 200, null],
        [webhookEventId(event), 2, "failed", 503, "the receiver answered 503"],
        [webhookEventId(event), 1, "failed", 500, "the receiver answered 500"]
      ])
      expect(lines.every((l) => l.type === "budget.threshold_reached")).toBe(true)
    }).pipe(Effect.provide(webhookStack(memoryStores))), 20_000)

  it.scopedLive("announces an event once however often it is published; another threshold is another event", () =>
    Effect.gen(function*() {
      const receiver = yield* webhookReceiver()
      const webhooks = yield* Webhooks
      const workspace = yield* Effect.flatMap(Workspaces, (w) => w.create("once", {}))
      const hook = yield* webhooks.create(workspace.id, { url: receiver.url, events: ["budget.threshold_reached"] })
      const published = yield* Effect.all([
        webhooks.publish(workspace.id, thresholdEvent(workspace.id)),
        // The same threshold, announced later and with the period written another way: the same event.
        webhooks.publish(workspace.id, { ...thresholdEvent(workspace.id), timestamp: "2026-11-28T10:16:00Z" }),
        webhooks.publish(workspace.id, {
          ...thresholdEvent(workspace.id),
          data: { ...thresholdEvent(workspace.id).data, budget: { amountUsd: 100, period: "month", periodStart: "2026-11-01T00:00:00Z" } }
        }),
        webhooks.publish(workspace.id, thresholdEvent(workspace.id, 1))
      ])
      expect(published).toEqual([true, false, false, true])
      yield* Effect.promise(() => receiver.waitFor(2))
      const lines = yield* deliveriesWhen(workspace.id, hook.id, (found) => found.filter((l) => l.status === "delivered").length === 2)
      expect(new Set(lines.map((l) => l.eventId)).size).toBe(2)
      expect(receiver.received).toHaveLength(2)
    }).pipe(Effect.provide(webhookStack(memoryStores))), 20_000)

  it.scopedLive("an attempt without an answer within the timeout fails and is retried", () =>
    Effect.gen(function*() {
      const receiver = yield* webhookReceiver(["hang"])
      const webhooks = yield* Webhooks
      const workspace = yield* Effect.flatMap(Workspaces, (w) => w.create("timeout", {}))
      const hook = yield* webhooks.create(workspace.id, { url: receiver.url })
      yield* webhooks.publish(workspace.id, thresholdEvent(workspace.id))
      const lines = yield* settled(workspace.id, hook.id)
      expect(lines.map((l) => [l.attempt, l.status, l.error])).toEqual([
        [2, "delivered", null],
        [1, "failed", "no answer within 300ms"]
      ])
    }).pipe(Effect.provide(webhookStack(memoryStores, { ...localSender, timeout: Duration.millis(300) }))), 20_000)

  it.scopedLive("abandons a delivery once every retry has failed", () =>
    Effect.gen(function*() {
      const receiver = yield* webhookReceiver([500, 500, 500, 500, 500])
      const webhooks = yield* Webhooks
      const workspace = yield* Effect.flatMap(Workspaces, (w) => w.create("abandoned", {}))
      const hook = yield* webhooks.create(workspace.id, { url: receiver.url })
      yield* webhooks.publish(workspace.id, thresholdEvent(workspace.id))
      const lines = yield* settled(workspace.id, hook.id)
      // Three retries after the first attempt, then no more.
      expect(lines.map((l) => l.status)).toEqual(["abandoned", "failed", "failed", "failed"])
      expect(receiver.received).toHaveLength(4)
    }).pipe(Effect.provide(webhookStack(memoryStores))), 20_000)
})
