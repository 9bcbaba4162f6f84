import { Context, Effect, Layer } from "effect"
import { EventEmitter } from "node:events"
import type { Readable } from "node:stream"
import { Pool, errors as undiciErrors } from "undici"
import { AppConfig } from "../../config"
import type { PreparedCall } from "./kinds/UpstreamKind"
import { UpstreamFailure } from "./UpstreamFailure"

export { UpstreamFailure } from "./UpstreamFailure"

/**
 * The whole exchange outlived UPSTREAM_DEADLINE_MS: the reason its body is destroyed with. An Error
 * because a Node stream is destroyed with one; made only when a deadline passes.
 */
export class ExchangeDeadline extends Error {
  constructor(readonly deadlineMs: number) {
    super(`upstream exchange longer than ${deadlineMs} ms`)
  }
}

export interface UpstreamResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /**
   * The body as it arrives (a Node stream: Effect's Stream costs about 0.5 ms of CPU per response
   * here, more than the whole rest of a forwarded request). Reading it to the end releases the
   * connection; destroying it ends the upstream exchange. Its errors go through `classify`.
   */
  readonly body: Readable
}

export const classify = (cause: unknown): UpstreamFailure => {
  if (cause instanceof ExchangeDeadline) return new UpstreamFailure({ kind: "timeout", detail: cause.message })
  if (cause instanceof undiciErrors.HeadersTimeoutError || cause instanceof undiciErrors.ConnectTimeoutError) {
    return new UpstreamFailure({ kind: "timeout", detail: cause.message })
  }
  if (cause instanceof undiciErrors.BodyTimeoutError) return new UpstreamFailure({ kind: "timeout", detail: cause.message })
  return new UpstreamFailure({ kind: "unreachable", detail: cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause) })
}

/**
 * Bytes of upstream answers held at once by every request together. Taken as chunks arrive and
 * given back when the read ends (however it ends): five large answers at once cannot add up to
 * more than the budget, whatever each one's own cap.
 */
export interface ByteBudget {
  readonly take: (bytes: number) => boolean
  readonly give: (bytes: number) => void
}

export const byteBudget = (limit: number): ByteBudget => {
  let held = 0
  return {
    take: (bytes) => {
      if (held + bytes > limit) return false
      held += bytes
      return true
    },
    give: (bytes) => void (held -= bytes)
  }
}

/** Upstream URLs remembered parsed at most (a URL per deployment, operation, model and stream kind). */
const maxRememberedAddresses = 4_096

const unlimited: ByteBudget = { take: () => true, give: () => {} }

const ignoreError = (_cause: unknown): void => {}

/**
 * Whether the body can still be read. A body that failed (or was destroyed) before anyone listened has
 * said all it will: listeners added now would wait forever, so the reader fails at once instead.
 */
export const unreadable = (body: Readable): UpstreamFailure | undefined =>
  body.destroyed || body.errored !== null
    ? classify(body.errored ?? new Error("the upstream answer ended before it was read"))
    : undefined

/**
 * Ends an upstream answer that will not be read. Safe whatever its state: every body has an error
 * listener from the moment it exists (`send`), and undici destroys an unread body with an error.
 */
export const discard = (body: Readable): void => void body.destroy()

/** The whole body, refused beyond maxBytes or the shared budget; interrupting the read ends the upstream exchange. */
export const readBody = (body: Readable, maxBytes: number, budget: ByteBudget = unlimited): Effect.Effect<Buffer, UpstreamFailure> =>
  Effect.async((resume) => {
    const stop = readWhole(body, maxBytes, budget, (read) => resume(read instanceof UpstreamFailure ? Effect.fail(read) : Effect.succeed(read)))
    return Effect.sync(stop)
  })

/**
 * Reads the body whole into `done` (called once: the bytes, or why not), refused beyond maxBytes or the shared
 * budget. Returns what stops the read (an interruption's): the body destroyed, the upstream exchange ended.
 */
const readWhole = (body: Readable, maxBytes: number, budget: ByteBudget, done: (read: Buffer | UpstreamFailure) => void): () => void => {
  const failed = unreadable(body)
  if (failed !== undefined) {
    done(failed)
    return () => void body.destroy()
  }
  const chunks: Array<Buffer> = []
  let size = 0
  let finished = false
  const finish = (read: Buffer | UpstreamFailure) => {
    if (finished) return
    finished = true
    budget.give(size)
    done(read)
  }
  const refuse = (failure: UpstreamFailure) => {
    body.destroy()
    finish(failure)
  }
  body.on("data", (chunk: Buffer) => {
    if (finished) return
    if (size + chunk.length > maxBytes) {
      return refuse(new UpstreamFailure({ kind: "malformed", detail: `answer of more than ${maxBytes} bytes` }))
    }
    if (!budget.take(chunk.length)) {
      return refuse(new UpstreamFailure({ kind: "overloaded", detail: "upstream answer budget spent" }))
    }
    size += chunk.length
    chunks.push(chunk)
  })
  body.once("end", () => {
    if (!finished) finish(Buffer.concat(chunks, size))
  })
  body.on("error", (cause) => finish(classify(cause)))
  return () => {
    body.destroy()
    if (!finished) {
      finished = true
      budget.give(size)
    }
  }
}

/** An upstream answer as `exchange` gives it: its headers, and its body read whole when that was asked for. */
export interface UpstreamAnswer extends UpstreamResponse {
  /** When its headers came (performance.now()). */
  readonly headersAt: number
  /** The body read whole, or why it could not be; undefined when it was left unread (to the caller). */
  readonly whole: Buffer | UpstreamFailure | undefined
}

/**
 * Whether to read an answer whole as its headers come: the most bytes it may have (within UPSTREAM_MAX_JSON_BYTES),
 * or undefined to leave its body unread (a stream to relay, an answer not to be read).
 */
export type ReadWhole = (status: number, headers: UpstreamResponse["headers"]) => number | undefined

const leftUnread: ReadWhole = () => undefined

/**
 * Where an exchange hands what stops it (the upstream request aborted, or its answer's read stopped), for a caller
 * that stops it itself when interrupted (the Forwarder, whose own interruption handler runs anyway): the exchange
 * then installs no canceller of its own, a masked step and its frames less. Cleared once the exchange has resumed.
 */
export interface ExchangeStop {
  stop: (() => void) | undefined
}

/**
 * One keep-alive connection pool per upstream origin. Connect, first-byte and idle timeouts are
 * undici's own; interrupting a request (a client that went away) aborts its upstream exchange.
 */
export class UpstreamClient extends Context.Tag("UpstreamClient")<UpstreamClient, {
  /** Sends a request as a kind of upstream prepared it (address, headers and body final: it may be signed). */
  readonly send: (request: PreparedCall) => Effect.Effect<UpstreamResponse, UpstreamFailure>
  /**
   * Sends a request and, when `readWhole` says so of its answer, reads the body whole in the same step (within
   * the shared budget): a JSON answer costs one asynchronous step, not one for its headers and one for its body.
   */
  readonly exchange: (request: PreparedCall, readWhole: ReadWhole, held?: ExchangeStop) => Effect.Effect<UpstreamAnswer, UpstreamFailure>
  /** A JSON answer (or error body) whole, within UPSTREAM_MAX_JSON_BYTES (or maxBytes) and the shared budget. */
  readonly readAnswer: (body: Readable, maxBytes?: number) => Effect.Effect<Buffer, UpstreamFailure>
}>() {
  static readonly layer = Layer.scoped(
    UpstreamClient,
    Effect.gen(function*() {
      const { serverLimits, upstreamLimits, upstreamTimeouts } = yield* AppConfig
      const budget = byteBudget(upstreamLimits.jsonAnswerBudgetBytes)
      const deadlineMs = upstreamLimits.exchangeDeadlineMs
      const pools = new Map<string, Pool>()
      yield* Effect.addFinalizer(() => Effect.promise(() => Promise.allSettled([...pools.values()].map((pool) => pool.close()))))
      const newPool = (origin: string): Pool => {
        const pool = new Pool(origin, {
          // Each client connection has at most one request upstream at a time, so as many sockets as the server
          // takes connections: a fixed smaller pool made the streams beyond it wait for one (1,024 concurrent
          // streams against 256 sockets stalled for seconds, bench/RESULTS.md "Gateway: concurrent streams").
          connections: serverLimits.maxConnections,
          pipelining: 1,
          keepAliveTimeout: 30_000,
          connect: { timeout: upstreamTimeouts.connectMs },
          headersTimeout: upstreamTimeouts.firstByteMs,
          bodyTimeout: upstreamTimeouts.idleMs
        })
        pools.set(origin, pool)
        return pool
      }
      /**
       * The pool of an upstream URL's origin, and the path and query its request goes to: each URL parsed once (a
       * deployment's URLs are few: one per operation, model and stream), the remembered ones let go past a bound.
       */
      const addresses = new Map<string, { readonly pool: Pool; readonly path: string }>()
      const addressOf = (requestUrl: string) => {
        const known = addresses.get(requestUrl)
        if (known !== undefined) return known
        const url = new URL(requestUrl)
        const address = { pool: pools.get(url.origin) ?? newPool(url.origin), path: `${url.pathname}${url.search}` }
        if (addresses.size >= maxRememberedAddresses) addresses.clear()
        addresses.set(requestUrl, address)
        return address
      }

      const exchange = (request: PreparedCall, wholeUpTo: ReadWhole, held?: ExchangeStop) =>
        Effect.async<UpstreamAnswer, UpstreamFailure>((resumeFiber) => {
          // Found as the request is sent, not in a step of its own before it (a throw is a defect either way).
          const { path, pool } = addressOf(request.url)
          // An emitter, not an AbortController: undici takes either, and this one costs far less.
          const signal = new EventEmitter()
          // The whole exchange has a deadline: a trickle of bytes never lets the idle timeout fire.
          let response: Readable | undefined
          let expired = false
          // Stops the body's read, if it is being read.
          let stopRead: (() => void) | undefined
          const resume = (result: Effect.Effect<UpstreamAnswer, UpstreamFailure>) => {
            if (held !== undefined) held.stop = undefined
            resumeFiber(result)
          }
          const deadline = setTimeout(() => {
            expired = true
            if (response === undefined) signal.emit("abort")
            else response.destroy(new ExchangeDeadline(deadlineMs))
          }, deadlineMs)
          pool
            .request({
              method: request.method,
              path,
              // The caller's key never leaves the service: the kind set the upstream's own credentials.
              headers: request.method === "GET" ? { "user-agent": "workspace-api", ...request.headers } : {
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                "user-agent": "workspace-api",
                ...request.headers
              },
              body: request.body,
              signal
            })
            .then(
              ({ body, headers, statusCode }) => {
                const headersAt = performance.now()
                response = body
                // Every body's errors are handled, whoever reads it and whenever they fail: a body cut
                // before its reader listens, or destroyed unread (undici then emits an abort error, with
                // no listener of its own once the whole answer had arrived: a short JSON answer to a
                // stream). Without this listener such an 'error' event ends the process. The readers
                // listen for themselves (readWhole, the relay).
                body.on("error", ignoreError)
                body.once("close", () => clearTimeout(deadline))
                const maxBytes = wholeUpTo(statusCode, headers)
                if (maxBytes === undefined) {
                  return resume(Effect.succeed({ status: statusCode, headers, body, headersAt, whole: undefined }))
                }
                stopRead = readWhole(body, Math.min(maxBytes, upstreamLimits.maxJsonAnswerBytes), budget, (whole) =>
                  resume(Effect.succeed({ status: statusCode, headers, body, headersAt, whole })))
              },
              (cause: unknown) => {
                clearTimeout(deadline)
                resume(Effect.fail(classify(expired ? new ExchangeDeadline(deadlineMs) : cause)))
              }
            )
          // Interrupted (the client went away): the upstream request is aborted, or its answer's read stopped.
          const stop = () => {
            clearTimeout(deadline)
            signal.emit("abort")
            stopRead?.()
          }
          if (held === undefined) return Effect.sync(stop)
          held.stop = stop
        })

      return {
        readAnswer: (body, maxBytes = upstreamLimits.maxJsonAnswerBytes) =>
          readBody(body, Math.min(maxBytes, upstreamLimits.maxJsonAnswerBytes), budget),
        send: (request) => exchange(request, leftUnread),
        exchange
      }
    })
  )
}
