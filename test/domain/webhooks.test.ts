import { describe, expect, it } from "vitest"
import { Webhook } from "standardwebhooks"
import { type BudgetThresholdReached, webhookEventId } from "../../src/domain/webhookEvent"
import { generateWebhookSecret, webhookSignature } from "../../src/domain/webhookSignature"
import { checkWebhookUrl, isPublicAddress } from "../../src/domain/webhookUrl"

const event: BudgetThresholdReached = {
  type: "budget.threshold_reached",
  timestamp: "2026-11-28T10:15:00.000Z",
  data: {
    workspaceId: "9d3c1f6e-0000-4000-8000-000000000001",
    keyId: "key-1",
    budget: { amountUsd: 10, period: "week", periodStart: "2026-11-23T00:00:00.000Z" },
    threshold: 0.8,
    spentUsd: 8.01
  }
}

describe("webhook events", () => {
  it("have an id made from the workspace, key, period start and threshold only", () => {
    const id = webhookEventId(event)
    expect(id).toMatch(/^evt_[0-9a-f]{32}$/)
    expect(webhookEventId({ ...event, timestamp: "2026-11-28T11:00:00Z", data: { ...event.data, spentUsd: 9 } })).toBe(id)
    expect(webhookEventId({ ...event, data: { ...event.data, budget: { ...event.data.budget, periodStart: "2026-11-23T00:00:00Z" } } })).toBe(id)
    expect(webhookEventId({ ...event, data: { ...event.data, threshold: 1 } })).not.toBe(id)
    expect(webhookEventId({ ...event, data: { ...event.data, keyId: null } })).not.toBe(id)
    expect(webhookEventId({ ...event, data: { ...event.data, keyId: "key-2" } })).not.toBe(id)
    expect(webhookEventId({ ...event, data: { ...event.data, budget: { ...event.data.budget, periodStart: "2026-11-30T00:00:00Z" } } })).not.toBe(id)
    expect(webhookEventId({ ...event, data: { ...event.data, workspaceId: "9d3c1f6e-0000-4000-8000-000000000002" } })).not.toBe(id)
  })
})

describe("webhook signatures", () => {
  it("are what the standardwebhooks library makes and verifies", () => {
    const secret = generateWebhookSecret()
    const body = JSON.stringify(event)
    const timestamp = Math.floor(Date.now() / 1000)
    const signature = webhookSignature(secret, "evt_1", timestamp, body)
    const library = new Webhook(secret)
    expect(signature).toBe(library.sign("evt_1", new Date(timestamp * 1000), body))
    expect(library.verify(body, { "webhook-id": "evt_1", "webhook-timestamp": String(timestamp), "webhook-signature": signature })).toEqual(event)
    expect(() => library.verify(body + " ", { "webhook-id": "evt_1", "webhook-timestamp": String(timestamp), "webhook-signature": signature }))
      .toThrow()
  })
})

describe("webhook URLs", () => {
  it("judge addresses: public ones pass, loopback, private, link-local, unique-local and mapped ones do not", () => {
    for (const address of ["93.184.216.34", "8.8.8.8", "2606:4700::1111"]) expect(isPublicAddress(address), address).toBe(true)
    for (const address of ["127.0.0.1", "10.0.0.1", "172.31.255.255", "192.168.0.1", "169.254.169.254", "::1", "fd12::1", "fe80::1", "::ffff:192.168.0.1", "::", "not-an-ip"]) {
      expect(isPublicAddress(address), address).toBe(false)
    }
  })

  it("take https, and http only when private addresses are allowed", () => {
    expect(checkWebhookUrl("https://hooks.example.com/x", false).ok).toBe(true)
    expect(checkWebhookUrl("http://hooks.example.com/x", false)).toEqual({ ok: false, problem: "url must be an https URL" })
    expect(checkWebhookUrl("http://127.0.0.1:9000/x", true).ok).toBe(true)
    expect(checkWebhookUrl("https://user:pass@hooks.example.com/x", false)).toEqual({ ok: false, problem: "url must not carry a user name or password" })
    expect(checkWebhookUrl("", false).ok).toBe(false)
  })
})
