import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedWebhook {
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface WebhookReceiver {
  /** http://127.0.0.1:PORT/hooks */
  readonly url: string
  readonly received: ReadonlyArray<ReceivedWebhook>
  /** Resolves once `count` requests have arrived (the condition awaited, no sleeping). */
  readonly waitFor: (count: number) => Promise<ReadonlyArray<ReceivedWebhook>>
  readonly close: () => Promise<void>
}

/**
 * A local receiver of webhooks: records every request and answers each with the next of `statuses`
 * (then 200); `"hang"` never answers (the sender's timeout).
 */
export const startWebhookReceiver = async (statuses: ReadonlyArray<number | "hang"> = []): Promise<WebhookReceiver> => {
  const received: Array<ReceivedWebhook> = []
  const waiting: Array<{ count: number; resolve: (all: ReadonlyArray<ReceivedWebhook>) => void }> = []
  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))
      const status = statuses[received.length] ?? 200
      received.push({ headers, body: Buffer.concat(chunks).toString("utf8") })
      for (const waiter of waiting.filter((w) => received.length >= w.count)) {
        waiting.splice(waiting.indexOf(waiter), 1)
        waiter.resolve([...received])
      }
      if (status !== "hang") response.writeHead(status).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    waitFor: (count) =>
      received.length >= count ? Promise.resolve([...received]) : new Promise((resolve) => waiting.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
