import ProviderAClient from "openai"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, createKey, createWorkspace, testAdminToken, useApp } from "../support/app"
import { eventually } from "../support/fakeUpstream"

/**
 * A budget's alert threshold, crossed by a request through the running service, reaches the workspace's webhook as
 * `budget.threshold_reached`, signed per Standard Webhooks, once.
 */

interface Received {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

describe("a budget threshold reached announced to the workspace's webhook", () => {
  const received: Array<Received> = []
  const receiver = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") })
      response.writeHead(204).end()
    })
  })
  const app = useApp({ WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: "true" }, { stores: "postgres" })

  beforeAll(() => new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve())))
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())))

  it("delivers budget.threshold_reached once, signed, with the budget and what was spent", async () => {
    // A budget of a dollar with a threshold at a millionth of it: the first request crosses it, the second does not again.
    const workspace = await createWorkspace(app.current, "Budgeted", {
      budget: { amountUsd: 1, period: "day", alertThresholds: [0.000001] }
    })
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
    const created = await call(app.current, "POST", `/admin/workspaces/${workspace.id}/webhooks`, { token: testAdminToken, body: { url } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const secret = (created.body as { secret: string }).secret
    const key = (await createKey(app.current, workspace.id, ["COMPLETION_API"])).key
    const client = new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
    for (const content of ["Say hello", "Say it again"]) {
      await client.chat.completions.create({ model: "chatgen-4o-mini", max_tokens: 50, messages: [{ role: "user", content }] })
    }
    await eventually(() => received.length, (count) => count >= 1, 20_000)
    const [delivery] = received
    const verified = new Webhook(secret).verify(delivery!.body, {
      "webhook-id": String(delivery!.headers["webhook-id"]),
      "webhook-timestamp": String(delivery!.headers["webhook-timestamp"]),
      "webhook-signature": String(delivery!.headers["webhook-signature"])
    }) as { type: string; data: { workspaceId: string; keyId: string | null; threshold: number; spentUsd: number; budget: { amountUsd: number; period: string } } }
    expect(verified).toMatchObject({
      type: "budget.threshold_reached",
      data: { workspaceId: workspace.id, keyId: null, threshold: 0.000001, budget: { amountUsd: 1, period: "day" } }
    })
    expect(verified.data.spentUsd).toBeGreaterThan(0)
    // The second request crossed nothing new: no second event (the worker polls every second; three polls pass).
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    expect(received).toHaveLength(1)
    const deliveries = await call(app.current, "GET", `/admin/workspaces/${workspace.id}/webhooks/${(created.body as { id: string }).id}/deliveries`, {
      token: testAdminToken
    })
    expect((deliveries.body as { data: Array<{ status: string }> }).data).toEqual([expect.objectContaining({ status: "delivered" })])
  })
})
