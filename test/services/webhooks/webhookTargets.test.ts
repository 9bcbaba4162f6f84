import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Layer, Schedule } from "effect"
import type { BudgetThresholdReached } from "../../../src/domain/webhookEvent"
import { Webhooks } from "../../../src/services/webhooks/Webhooks"
import type { SenderOptions } from "../../../src/services/webhooks/WebhookSender"
import { WebhookStore } from "../../../src/services/webhooks/WebhookStore/index"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import { webhookReceiver, webhookStack } from "../../support/webhookStack"

const memoryStores = Layer.merge(WebhookStore.memory, Workspaces.memory)

/** A resolver the test controls: what each name resolves to now (a name it does not hold does not resolve). */
const names = new Map<string, ReadonlyArray<string>>()
const sender = (allowPrivate: boolean): SenderOptions => ({
  allowPrivate,
  resolve: (host) => {
    const found = names.get(host)
    return found === undefined ? Effect.fail(`${host} could not be resolved (ENOTFOUND)`) : Effect.succeed(found)
  },
  timeout: Duration.seconds(2)
})

const event = (workspaceId: string): BudgetThresholdReached => ({
  type: "budget.threshold_reached",
  timestamp: "2026-11-28T10:15:00.000Z",
  data: { workspaceId, keyId: "key-1", budget: { amountUsd: 5, period: "day", periodStart: "2026-11-28T00:00:00.000Z" }, threshold: 1, spentUsd: 5 }
})

const refusal = (workspaceId: string, url: string) =>
  Effect.flatMap(Webhooks, (webhooks) => Effect.either(webhooks.create(workspaceId, { url }))).pipe(
    Effect.map(Either.match({ onLeft: (error) => (error._tag === "WebhookTargetRefused" ? error.reason : error._tag), onRight: () => "accepted" }))
  )

describe("webhook targets", () => {
  it.scopedLive("without WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: https only, nothing inside, also behind a name", () =>
    Effect.gen(function*() {
      names.set("hooks.example.com", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"])
      names.set("inside.example.com", ["93.184.216.34", "10.0.0.7"])
      const { id } = yield* Effect.flatMap(Workspaces, (w) => w.create("targets", {}))
      expect(yield* refusal(id, "https://hooks.example.com/hooks")).toBe("accepted")
      // Not resolvable now: kept, and checked again at each delivery.
      expect(yield* refusal(id, "https://later.example.com/hooks")).toBe("accepted")
      expect(yield* refusal(id, "http://hooks.example.com/hooks")).toBe("url must be an https URL")
      expect(yield* refusal(id, "ftp://hooks.example.com/hooks")).toBe("url must be an https URL")
      expect(yield* refusal(id, "hooks.example.com/hooks")).toBe("url must be an absolute https URL")
      expect(yield* refusal(id, "https://localhost:8443/hooks")).toMatch(/localhost/)
      for (const inside of [
        "127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.1.10", "169.254.169.254", "100.64.0.1", "0.0.0.0",
        "[::1]", "[fd00::1]", "[fe80::1]", "[::ffff:127.0.0.1]", "[::ffff:10.0.0.1]"
      ]) {
        expect(yield* refusal(id, `https://${inside}/hooks`), inside).toMatch(/private, loopback or link-local/)
      }
      expect(yield* refusal(id, "https://inside.example.com/hooks")).toBe(
        "url: inside.example.com resolves to a private, loopback or link-local address (10.0.0.7): refused"
      )
    }).pipe(Effect.provide(webhookStack(memoryStores, sender(false)))))

  it.scopedLive("at delivery, the name is resolved again and an address inside is refused: nothing is sent", () =>
    Effect.gen(function*() {
      const receiver = yield* webhookReceiver()
      const port = new URL(receiver.url).port
      names.set("rebind.example.com", ["93.184.216.34"])
      const webhooks = yield* Webhooks
      const { id } = yield* Effect.flatMap(Workspaces, (w) => w.create("rebinding", {}))
      const hook = yield* webhooks.create(id, { url: `https://rebind.example.com:${port}/hooks` })
      // The name now points at this machine, where the receiver listens.
      names.set("rebind.example.com", ["127.0.0.1"])
      yield* webhooks.publish(id, event(id))
      const lines = yield* webhooks.deliveries(id, hook.id).pipe(
        Effect.filterOrFail((found) => found.some((l) => l.status === "failed"), () => "not yet"),
        Effect.retry(Schedule.spaced("20 millis"))
      )
      expect(lines.find((l) => l.status === "failed")).toMatchObject({
        attempt: 1,
        responseStatus: null,
        error: "rebind.example.com resolves to a private, loopback or link-local address (127.0.0.1): refused"
      })
      expect(receiver.received).toEqual([])
    }).pipe(Effect.provide(webhookStack(memoryStores, sender(false)))))

  it.scopedLive("with WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: plain http and local targets, connected at the address the name resolved to", () =>
    Effect.gen(function*() {
      const receiver = yield* webhookReceiver()
      const port = new URL(receiver.url).port
      // Only this test's resolver knows the name: the request can only have gone to the address it answered.
      names.set("receiver.example.test", ["127.0.0.1"])
      const webhooks = yield* Webhooks
      const { id } = yield* Effect.flatMap(Workspaces, (w) => w.create("allowed", {}))
      expect(yield* refusal(id, "ftp://127.0.0.1/hooks")).toBe("url must be an http or https URL")
      yield* webhooks.create(id, { url: `http://receiver.example.test:${port}/hooks` })
      yield* webhooks.publish(id, event(id))
      const [request] = yield* Effect.promise(() => receiver.waitFor(1))
      expect(request!.headers.host).toBe(`receiver.example.test:${port}`)
    }).pipe(Effect.provide(webhookStack(memoryStores, sender(true)))))
})
