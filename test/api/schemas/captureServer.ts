/**
 * A local HTTP server that records the one request a client library sends and answers with a
 * canned reply: lets the tests decode exactly what the official clients put on the wire, and
 * check that the clients accept the response shapes of the schemas.
 */
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

export interface CannedReply {
  readonly status?: number
  readonly contentType: "application/json" | "text/event-stream"
  readonly body: string
}

export interface CapturedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
}

/** Runs `call` against a fresh server at `http://127.0.0.1:<port>`; returns what it sent and got. */
export const captureRequest = async <A>(
  reply: CannedReply,
  call: (origin: string) => Promise<A>
): Promise<{ readonly request: CapturedRequest; readonly result: A }> => {
  const requests: Array<CapturedRequest> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: text === "" ? undefined : JSON.parse(text)
      })
      res.writeHead(reply.status ?? 200, { "content-type": reply.contentType })
      res.end(reply.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  try {
    const result = await call(`http://127.0.0.1:${port}`)
    const request = requests[0]
    if (request === undefined) throw new Error("the client sent no request")
    return { request, result }
  } finally {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Data-only SSE (provider_a, provider_c): one `data:` event per payload, then `[DONE]`. */
export const dataOnlySse = (payloads: ReadonlyArray<unknown>): string =>
  [...payloads.map((payload) => `data: ${JSON.stringify(payload)}\n\n`), "data: [DONE]\n\n"].join("")

/** Named-event SSE (provider_b): `event: <type>` + `data: <payload>`. */
export const namedEventSse = (events: ReadonlyArray<{ readonly type: string }>): string =>
  events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("")
