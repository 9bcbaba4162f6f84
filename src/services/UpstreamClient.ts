import { Context, Data, Effect, Layer, Redacted, Stream } from "effect"
import { Pool, errors as undiciErrors } from "undici"
import { AppConfig } from "../config"
import type { Provider, UpstreamTarget } from "./Upstreams"

/** Why an upstream exchange failed. `detail` is for logs only: no body ever shows it. */
export class UpstreamFailure extends Data.TaggedError("UpstreamFailure")<{
  readonly kind: "timeout" | "unreachable" | "malformed"
  readonly detail: string
}> {}

export interface UpstreamResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The body as it arrives; consuming it to the end, or stopping early, releases the connection. */
  readonly body: Stream.Stream<Uint8Array, UpstreamFailure>
}

export interface UpstreamRequest {
  readonly provider: Provider
  /** Appended to the upstream's API root, e.g. /v1/chat/completions. */
  readonly path: string
  readonly body: string
  /** Protocol headers beside auth and content type, e.g. the messages version. */
  readonly headers?: Readonly<Record<string, string>>
}

/** How each provider expects the service's own credentials. The caller's key never leaves the service. */
const authHeaders = (provider: Provider, key: Redacted.Redacted): Record<string, string> =>
  provider === "provider_b" ? { "x-api-key": Redacted.value(key) } : { authorization: `Bearer ${Redacted.value(key)}` }

const classify = (cause: unknown): UpstreamFailure => {
  if (cause instanceof undiciErrors.HeadersTimeoutError || cause instanceof undiciErrors.ConnectTimeoutError) {
    return new UpstreamFailure({ kind: "timeout", detail: cause.message })
  }
  if (cause instanceof undiciErrors.BodyTimeoutError) return new UpstreamFailure({ kind: "timeout", detail: cause.message })
  return new UpstreamFailure({ kind: "unreachable", detail: cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause) })
}

/**
 * One keep-alive connection pool per upstream origin. Connect, first-byte and idle timeouts are
 * undici's own; interrupting a request (a client that went away) aborts its upstream exchange.
 */
export class UpstreamClient extends Context.Tag("UpstreamClient")<UpstreamClient, {
  readonly send: (target: UpstreamTarget, request: UpstreamRequest) => Effect.Effect<UpstreamResponse, UpstreamFailure>
}>() {
  static readonly layer = Layer.scoped(
    UpstreamClient,
    Effect.gen(function*() {
      const { upstreamTimeouts } = yield* AppConfig
      const pools = new Map<string, Pool>()
      yield* Effect.addFinalizer(() => Effect.promise(() => Promise.allSettled([...pools.values()].map((pool) => pool.close()))))
      const poolFor = (origin: string): Pool => {
        const existing = pools.get(origin)
        if (existing) return existing
        const pool = new Pool(origin, {
          connections: 256,
          pipelining: 1,
          keepAliveTimeout: 30_000,
          connect: { timeout: upstreamTimeouts.connectMs },
          headersTimeout: upstreamTimeouts.firstByteMs,
          bodyTimeout: upstreamTimeouts.idleMs
        })
        pools.set(origin, pool)
        return pool
      }

      return {
        send: (target, request) =>
          Effect.suspend(() => {
            const url = new URL(target.url)
            const pool = poolFor(url.origin)
            const basePath = url.pathname.replace(/\/+$/, "")
            return Effect.async<UpstreamResponse, UpstreamFailure>((resume, signal) => {
              pool
                .request({
                  method: "POST",
                  path: `${basePath}${request.path}`,
                  headers: {
                    "content-type": "application/json",
                    accept: "application/json, text/event-stream",
                    "user-agent": "workspace-api",
                    ...request.headers,
                    ...authHeaders(request.provider, target.key)
                  },
                  body: request.body,
                  signal
                })
                .then(
                  ({ body, headers, statusCode }) => {
                    const stream = Stream.fromAsyncIterable(body as AsyncIterable<Uint8Array>, classify).pipe(
                      // Stopping early (client gone, error relayed) destroys the body and so the upstream exchange.
                      Stream.ensuring(Effect.sync(() => body.destroy()))
                    )
                    resume(Effect.succeed({ status: statusCode, headers, body: stream }))
                  },
                  (cause: unknown) => resume(Effect.fail(classify(cause)))
                )
            })
          })
      }
    })
  )
}
