import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** A span as OTLP/HTTP JSON carries it (the fields the tests read). */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string | undefined
  readonly name: string
  /** 1 internal, 2 server, 3 client. */
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
  readonly events: ReadonlyArray<{ readonly name: string; readonly timeUnixNano: string }>
  readonly startTimeUnixNano: string
  readonly endTimeUnixNano: string
}

export interface OtlpReceiver {
  /** The root to give as OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string
  readonly spans: Array<ReceivedSpan>
  /** What each post was sent to, and the resource's service.name. */
  readonly posts: Array<{ readonly path: string; readonly serviceName: string | undefined; readonly headers: http.IncomingHttpHeaders }>
  readonly close: () => Promise<void>
}

interface TracesBody {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<{ readonly key: string; readonly value: { readonly stringValue?: string } }> }
    readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<ReceivedSpan> }>
  }>
}

/** A local OTLP/HTTP receiver (JSON): collects every span posted to /v1/traces and answers 200. */
export const startOtlpReceiver = async (port = 0): Promise<OtlpReceiver> => {
  const spans: Array<ReceivedSpan> = []
  const posts: Array<{ path: string; serviceName: string | undefined; headers: http.IncomingHttpHeaders }> = []
  const server = http.createServer((request, response) => {
    let text = ""
    request.on("data", (chunk: Buffer) => void (text += chunk.toString()))
    request.on("end", () => {
      const body = JSON.parse(text) as TracesBody
      for (const resourceSpan of body.resourceSpans ?? []) {
        const serviceName = resourceSpan.resource?.attributes?.find((attribute) => attribute.key === "service.name")?.value.stringValue
        posts.push({ path: request.url ?? "", serviceName, headers: request.headers })
        for (const scope of resourceSpan.scopeSpans ?? []) spans.push(...(scope.spans ?? []))
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", resolve)
  })
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    posts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
