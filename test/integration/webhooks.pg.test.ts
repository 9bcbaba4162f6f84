import { describe, expect, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, Schedule } from "effect"
import type { BudgetThresholdReached } from "../../src/domain/webhookEvent"
import { Webhooks } from "../../src/services/webhooks/Webhooks"
import { WebhookStore } from "../../src/services/webhooks/WebhookStore/index"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { freshDatabaseUrl, query } from "../support/database"
import { webhookReceiver, webhookStack } from "../support/webhookStack"

/** One instance's webhook side: its own pool on the shared database, its own background sender. */
const instance = (url: string) =>
  webhookStack(Layer.merge(WebhookStore.layer, Workspaces.layer).pipe(Layer.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 4 }))))

const thresholdEvent = (workspaceId: string, threshold: number, keyId: string | null): BudgetThresholdReached => ({
  type: "budget.threshold_reached",
  timestamp: new Date().toISOString(),
  data: {
    workspaceId,
    keyId,
    budget: { amountUsd: 50, period: "day", periodStart: "2026-11-28T00:00:00.000Z" },
    threshold,
    spentUsd: 50 * threshold
  }
})

describe("webhooks on two instances sharing one database", () => {
  it.scopedLive("each event is delivered once, whichever instances announce it and whichever claims it", () =>
    Effect.gen(function*() {
      const url = yield* Effect.promise(freshDatabaseUrl)
      const receiver = yield* webhookReceiver()
      const [one, two] = [yield* Layer.build(instance(url)), yield* Layer.build(instance(url))]
      const webhooksOf = (context: typeof one) => Effect.provide(Webhooks, context)
      const [first, second] = [yield* webhooksOf(one), yield* webhooksOf(two)]
      const workspace = yield* Effect.provide(Effect.flatMap(Workspaces, (w) => w.create("two instances", {})), one)
      yield* first.create(workspace.id, { url: receiver.url })

      // 20 distinct events (4 thresholds × 5 budgets), each announced by both instances at once.
      const events = [0.5, 0.8, 0.9, 1].flatMap((threshold) =>
        [null, "key-a", "key-b", "key-c", "key-d"].map((keyId) => thresholdEvent(workspace.id, threshold, keyId)))
      const firsts = yield* Effect.forEach(
        events,
        (event) => Effect.all([first.publish(workspace.id, event), second.publish(workspace.id, event)], { concurrency: 2 }),
        { concurrency: "unbounded" }
      )
      // Exactly one of the two announcements of each event was the first.
      expect(firsts.every(([a, b]) => a !== b)).toBe(true)

      // Awaited: every delivery made and none left pending, so nothing more can be sent.
      yield* Effect.promise(() => receiver.waitFor(events.length))
      yield* Effect.promise(() => query<{ pending: number }>(url, "SELECT count(*)::int AS pending FROM webhook_deliveries WHERE state <> 'delivered'")).pipe(
        Effect.filterOrFail(([row]) => row!.pending === 0, () => "deliveries still pending"),
        Effect.retry(Schedule.spaced("20 millis"))
      )
      const ids = receiver.received.map((r) => r.headers["webhook-id"])
      expect(ids).toHaveLength(events.length)
      expect(new Set(ids).size).toBe(events.length)
      const attempts = yield* Effect.promise(() => query<{ count: number }>(url, "SELECT count(*)::int AS count FROM webhook_attempts"))
      expect(attempts[0]!.count).toBe(events.length)
    }), { timeout: 60_000 })
})
