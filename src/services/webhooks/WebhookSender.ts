import { Context, Data, Duration, Effect, Layer } from "effect"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { AppConfig } from "../../config"
import { checkWebhookUrl, hostOf, isPublicAddress } from "../../domain/webhookUrl"

/** Why an attempt did not reach a receiver that answered 2xx, in the words the deliveries list shows. */
export class WebhookNotDelivered extends Data.TaggedError("WebhookNotDelivered")<{
  readonly responseStatus: number | null
  readonly reason: string
}> {}

/** Why a webhook's URL may not be used, in the words the caller is told. */
export class WebhookTargetRefused extends Data.TaggedError("WebhookTargetRefused")<{ readonly reason: string }> {}

/** The addresses a name resolves to (every one of them, both families). */
export type Resolve = (host: string) => Effect.Effect<ReadonlyArray<string>, string>

const systemResolve: Resolve = (host) =>
  Effect.tryPromise({
    try: () => dns.promises.lookup(host, { all: true, verbatim: true }),
    catch: (error) => `${host} could not be resolved (${error instanceof Error && "code" in error ? String(error.code) : "no address"})`
  }).pipe(Effect.map((found) => found.map((entry) => entry.address)))

export interface SenderOptions {
  readonly allowPrivate: boolean
  /** How a name becomes addresses (the system's resolver, or a test's). */
  readonly resolve: Resolve
  /** The longest an attempt may take, connection to answer. */
  readonly timeout: Duration.Duration
}

/** One POST to a receiver. */
export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * Sends deliveries. The receiver's name is resolved here and each address checked before anything is sent
 * (unless private addresses are allowed); the connection then goes to the checked address itself, through
 * a lookup that answers only it, so a name that resolves elsewhere a moment later changes nothing (no
 * rebinding window). TLS still names and verifies the URL's host.
 */
export class WebhookSender extends Context.Tag("WebhookSender")<WebhookSender, {
  /** The URL as stored, or why not: the scheme and, without WEBHOOKS_ALLOW_PRIVATE_ADDRESSES, where its name points now. */
  readonly checkTarget: (url: string) => Effect.Effect<string, WebhookTargetRefused>
  /** The receiver's status when it answered 2xx. */
  readonly send: (request: WebhookRequest) => Effect.Effect<number, WebhookNotDelivered>
}>() {
  static readonly make = (options: SenderOptions) => {
    /**
     * The address to connect to: the host itself when it is one, else the first its name resolves to; each
     * checked. `inside`: an address was refused (not a resolver's failure).
     */
    const target = (url: URL): Effect.Effect<string, { readonly inside: boolean; readonly reason: string }> => {
      const host = hostOf(url)
      const addresses = isIP(host) !== 0 ? Effect.succeed([host]) : options.resolve(host)
      return addresses.pipe(
        Effect.mapError((reason) => ({ inside: false, reason })),
        Effect.flatMap((found) => {
          if (found.length === 0) return Effect.fail({ inside: false, reason: `${host} resolves to no address` })
          const refused = options.allowPrivate ? undefined : found.find((address) => !isPublicAddress(address))
          return refused === undefined
            ? Effect.succeed(found[0]!)
            : Effect.fail({ inside: true, reason: `${host} resolves to a private, loopback or link-local address (${refused}): refused` })
        })
      )
    }
    return WebhookSender.of({
      checkTarget: (raw) => {
        const checked = checkWebhookUrl(raw, options.allowPrivate)
        if (!checked.ok) return Effect.fail(new WebhookTargetRefused({ reason: checked.problem }))
        if (options.allowPrivate) return Effect.succeed(checked.url.href)
        // A name that cannot be resolved now is kept (it is checked again at every delivery); one that points inside is refused.
        return target(checked.url).pipe(
          Effect.timeoutFail({ duration: options.timeout, onTimeout: () => ({ inside: false, reason: "no answer from the resolver" }) }),
          Effect.catchAll((problem) =>
            problem.inside ? Effect.fail(new WebhookTargetRefused({ reason: `url: ${problem.reason}` })) : Effect.void
          ),
          Effect.as(checked.url.href)
        )
      },
      send: (request) => {
        const checked = checkWebhookUrl(request.url, options.allowPrivate)
        if (!checked.ok) return Effect.fail(new WebhookNotDelivered({ responseStatus: null, reason: checked.problem }))
        const url = checked.url
        return target(url).pipe(
          Effect.mapError(({ reason }) => new WebhookNotDelivered({ responseStatus: null, reason })),
          Effect.flatMap((address) => post(url, address, request)),
          Effect.timeoutFail({
            duration: options.timeout,
            onTimeout: () => new WebhookNotDelivered({ responseStatus: null, reason: `no answer within ${Duration.format(options.timeout)}` })
          })
        )
      }
    })
  }

  /** The system's resolver, a 10 s timeout, WEBHOOKS_ALLOW_PRIVATE_ADDRESSES from the configuration. */
  static readonly layer = Layer.effect(
    WebhookSender,
    Effect.map(AppConfig, (config) =>
      WebhookSender.make({ allowPrivate: config.webhooksAllowPrivateAddresses, resolve: systemResolve, timeout: Duration.seconds(10) }))
  )
}

/** The POST itself, connected to `address`; interrupted (the timeout), the socket is destroyed. */
const post = (url: URL, address: string, request: WebhookRequest): Effect.Effect<number, WebhookNotDelivered> =>
  Effect.async<number, WebhookNotDelivered>((resume) => {
    const family = isIP(address)
    const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
      if (lookupOptions.all === true) callback(null, [{ address, family }])
      else callback(null, address, family)
    }
    const client = url.protocol === "https:" ? https : http
    const outgoing = client.request(url, {
      method: "POST",
      lookup,
      // No pooled socket: each attempt connects to the address just checked.
      agent: false,
      headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) }
    }, (response) => {
      const status = response.statusCode ?? 0
      // The answer's body is not read: only its status counts.
      response.resume()
      response.on("error", () => undefined)
      resume(
        status >= 200 && status < 300
          ? Effect.succeed(status)
          : Effect.fail(new WebhookNotDelivered({ responseStatus: status, reason: `the receiver answered ${status}` }))
      )
    })
    outgoing.on("error", (error) => {
      const code = "code" in error ? ` (${String(error.code)})` : ""
      resume(Effect.fail(new WebhookNotDelivered({ responseStatus: null, reason: `${error.message}${code}` })))
    })
    outgoing.end(request.body)
    return Effect.sync(() => outgoing.destroy())
  })
