import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { type ClaimedDelivery, WebhookStore } from "../../src/services/webhooks/WebhookStore/index"
import { Workspaces } from "../../src/services/workspaces/Workspaces"

/** The behaviour every backing of WebhookStore must have: run on `.memory` and on `.layer` (PostgreSQL). */
export const webhookStoreContract = <E>(backing: string, layer: Layer.Layer<WebhookStore | Workspaces, E>) =>
  describe(`WebhookStore (${backing})`, () => {
    const workspace = Effect.flatMap(Workspaces, (workspaces) => workspaces.create("webhooks contract", {}))
    const hook = (workspaceId: string, url = "https://hooks.example.com/a") =>
      Effect.flatMap(WebhookStore, (store) =>
        store.create({ workspaceId, url, events: ["budget.threshold_reached"], secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0" }))
    const event = (workspaceId: string, id = "evt_1") => ({ id, workspaceId, type: "budget.threshold_reached" as const, body: `{"id":"${id}"}` })
    const t0 = new Date("2026-11-01T10:00:00Z")
    const later = (seconds: number) => new Date(t0.getTime() + seconds * 1000)

    it.effect("keeps a workspace's webhooks, lists them without others', removes them", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const [one, other] = [yield* workspace, yield* workspace]
        const a = yield* hook(one.id, "https://hooks.example.com/a")
        yield* hook(other.id, "https://hooks.example.com/other")
        expect(a).toMatchObject({ workspaceId: one.id, url: "https://hooks.example.com/a", events: ["budget.threshold_reached"] })
        expect(a.createdAt).toBeInstanceOf(Date)
        expect((yield* store.list(one.id)).map((w) => w.id)).toEqual([a.id])
        expect(Option.isNone(yield* store.remove(other.id, a.id))).toBe(true)
        expect(Option.map(yield* store.remove(one.id, a.id), (w) => w.url)).toEqual(Option.some(a.url))
        expect(yield* store.list(one.id)).toEqual([])
        expect(Option.isNone(yield* store.deliveries(one.id, a.id, 10))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("keeps an event once by its id and queues one delivery per webhook of the workspace", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const [one, other] = [yield* workspace, yield* workspace]
        const [a, b] = [yield* hook(one.id), yield* hook(one.id, "https://hooks.example.com/b")]
        yield* hook(other.id)
        expect(yield* store.enqueue(event(one.id), t0)).toBe(true)
        expect(yield* store.enqueue(event(one.id), t0)).toBe(false)
        expect(yield* store.claimDue(later(-1), later(60), 10)).toEqual([])
        const claimed = yield* store.claimDue(t0, later(60), 10)
        expect(claimed.map((d) => d.webhookId).sort()).toEqual([a.id, b.id].sort())
        expect(claimed[0]).toMatchObject({ eventId: "evt_1", type: "budget.threshold_reached", body: "{\"id\":\"evt_1\"}", attempt: 1 })
        // Claimed: nobody else takes them until the claim runs out.
        expect(yield* store.claimDue(later(30), later(90), 10)).toEqual([])
        expect((yield* store.claimDue(later(61), later(120), 10)).map((d) => d.attempt)).toEqual([2, 2])
      }).pipe(Effect.provide(layer)))

    it.effect("records attempts: a failure with a retry, a success; the list shows them newest first with what is pending", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const { id } = yield* workspace
        const a = yield* hook(id)
        yield* store.enqueue(event(id), t0)
        const pending = Option.getOrThrow(yield* store.deliveries(id, a.id, 10))
        expect(pending).toEqual([{ eventId: "evt_1", type: "budget.threshold_reached", attempt: 1, status: "pending", at: t0, responseStatus: null, error: null }])
        const [first] = yield* store.claimDue(t0, later(60), 10)
        yield* store.recordAttempt(first!, { at: later(1), delivered: false, responseStatus: 500, error: "the receiver answered 500", retryAt: later(6) })
        expect(yield* store.claimDue(later(5), later(65), 10)).toEqual([])
        const [second] = yield* store.claimDue(later(6), later(66), 10)
        expect(second!.attempt).toBe(2)
        yield* store.recordAttempt(second!, { at: later(7), delivered: true, responseStatus: 204, error: null, retryAt: null })
        expect(yield* store.claimDue(later(1000), later(1060), 10)).toEqual([])
        const lines = Option.getOrThrow(yield* store.deliveries(id, a.id, 10))
        expect(lines.map((l) => [l.attempt, l.status, l.responseStatus, l.error])).toEqual([
          [2, "delivered", 204, null],
          [1, "failed", 500, "the receiver answered 500"]
        ])
      }).pipe(Effect.provide(layer)))

    it.effect("abandons a delivery whose last attempt fails; a sender whose claim ran out changes nothing of the next one", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const { id } = yield* workspace
        const a = yield* hook(id)
        yield* store.enqueue(event(id, "evt_late"), t0)
        const [stale] = yield* store.claimDue(t0, later(10), 10)
        const [current] = yield* store.claimDue(later(11), later(20), 10)
        expect(current!.attempt).toBe(2)
        // The first sender comes back late: its attempt is listed, the delivery stays the second's.
        yield* store.recordAttempt(stale as ClaimedDelivery, { at: later(12), delivered: false, responseStatus: null, error: "timed out", retryAt: null })
        yield* store.recordAttempt(current!, { at: later(13), delivered: false, responseStatus: 503, error: "the receiver answered 503", retryAt: null })
        expect(yield* store.claimDue(later(10_000), later(10_060), 10)).toEqual([])
        const lines = Option.getOrThrow(yield* store.deliveries(id, a.id, 10))
        expect(lines.map((l) => [l.attempt, l.status])).toEqual([[2, "abandoned"], [1, "failed"]])
      }).pipe(Effect.provide(layer)))
  })
