// A service account's OAuth2 access tokens: the JWT-bearer assertion signed here (RS256, node:crypto) and
// exchanged at the account file's own token_uri (the usual auth library always asks its hard-coded host),
// each token kept until shortly before it expires, and one fetch in flight per account however many wait.
import { Clock, Deferred, Duration, Effect, Exit, FiberId, Redacted, Schema } from "effect"
import { sign } from "node:crypto"
import { request } from "undici"
import type { ServiceAccount } from "../../../domain/deployments"
import { readBody, UpstreamFailure } from "../UpstreamClient"

export const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

/** A token is fetched again this long before it expires. */
export const refreshMarginMs = 5 * 60 * 1000

const assertionSeconds = 3600
const tokenAnswerMaxBytes = 64 * 1024
const tokenFetchTimeout = Duration.seconds(10)

const TokenAnswer = Schema.parseJson(Schema.Struct({ access_token: Schema.NonEmptyString, expires_in: Schema.Number }))
const OAuthError = Schema.parseJson(Schema.Struct({ error: Schema.String, error_description: Schema.optional(Schema.String) }))

const base64Url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

const unreachable = (detail: string) => new UpstreamFailure({ kind: "unreachable", detail: `token endpoint: ${detail}` })

/** The signed assertion `{iss, scope, aud: tokenUri, iat, exp}`; a key that cannot sign fails (never naming the key). */
export const signAssertion = (account: ServiceAccount, nowSeconds: number): Effect.Effect<string, UpstreamFailure> =>
  Effect.try({
    try: () => {
      const header = base64Url({ alg: "RS256", typ: "JWT", ...(account.privateKeyId === undefined ? {} : { kid: account.privateKeyId }) })
      const claims = base64Url({
        iss: account.clientEmail,
        scope: cloudPlatformScope,
        aud: account.tokenUri,
        iat: nowSeconds,
        exp: nowSeconds + assertionSeconds
      })
      const signature = sign("RSA-SHA256", Buffer.from(`${header}.${claims}`), Redacted.value(account.privateKey)).toString("base64url")
      return `${header}.${claims}.${signature}`
    },
    catch: () => unreachable(`the private key of ${account.clientEmail} cannot sign`)
  })

export interface AccessToken {
  readonly token: string
  /** Seconds it lives from when it was issued. */
  readonly expiresIn: number
}

/** One exchange of a fresh assertion at the account's token_uri: bounded in size and time. */
export const fetchAccessToken = (account: ServiceAccount): Effect.Effect<AccessToken, UpstreamFailure> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const assertion = yield* signAssertion(account, Math.floor(now / 1000))
    const answer = yield* Effect.tryPromise({
      try: (signal) =>
        request(account.tokenUri, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
          body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion }).toString(),
          signal
        }),
      catch: (cause) => unreachable(cause instanceof Error ? `${cause.name}: ${cause.message}` : "request failed")
    })
    const text = (yield* readBody(answer.body, tokenAnswerMaxBytes).pipe(Effect.mapError((failure) => unreachable(failure.detail)))).toString("utf8")
    if (answer.statusCode !== 200) {
      const refusal = Schema.decodeUnknownOption(OAuthError)(text)
      const reason = refusal._tag === "Some" ? `${refusal.value.error}${refusal.value.error_description === undefined ? "" : `: ${refusal.value.error_description}`}` : "no OAuth2 error body"
      return yield* unreachable(`answered ${answer.statusCode} (${reason.slice(0, 300)})`)
    }
    const token = yield* Schema.decodeUnknown(TokenAnswer)(text).pipe(Effect.mapError(() => unreachable("an answer without access_token and expires_in")))
    return { token: token.access_token, expiresIn: token.expires_in }
  }).pipe(
    Effect.timeoutFail({ duration: tokenFetchTimeout, onTimeout: () => unreachable(`no answer within ${Duration.format(tokenFetchTimeout)}`) })
  )

type Slot =
  | { readonly _tag: "Held"; readonly token: string; readonly staleAt: number }
  | { readonly _tag: "Fetching"; readonly done: Deferred.Deferred<string, UpstreamFailure> }

export interface TokenCache {
  /** A bearer token of the account: the one held while fresh, else one fetch shared by every caller meanwhile. */
  readonly accessToken: (account: ServiceAccount) => Effect.Effect<string, UpstreamFailure>
}

/**
 * A cache of tokens per service account (its email, key id and token_uri). A failed fetch is not kept: the
 * next call tries again. `fetch` is the exchange (fetchAccessToken; tests may count it).
 */
export const makeTokenCache = (fetch: (account: ServiceAccount) => Effect.Effect<AccessToken, UpstreamFailure> = fetchAccessToken): Effect.Effect<TokenCache> =>
  Effect.sync(() => {
    const slots = new Map<string, Slot>()
    const refresh = (key: string, account: ServiceAccount, done: Deferred.Deferred<string, UpstreamFailure>) =>
      Effect.gen(function* () {
        const startedAt = yield* Clock.currentTimeMillis
        const outcome = yield* Effect.exit(fetch(account))
        if (Exit.isSuccess(outcome)) {
          slots.set(key, { _tag: "Held", token: outcome.value.token, staleAt: startedAt + outcome.value.expiresIn * 1000 - refreshMarginMs })
        } else {
          slots.delete(key)
        }
        yield* Deferred.done(done, Exit.map(outcome, (fetched) => fetched.token))
      })
    return {
      accessToken: (account) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.suspend(() => {
            const key = `${account.clientEmail}\n${account.privateKeyId ?? ""}\n${account.tokenUri}`
            const slot = slots.get(key)
            if (slot?._tag === "Held" && now < slot.staleAt) return Effect.succeed(slot.token)
            if (slot?._tag === "Fetching") return Deferred.await(slot.done)
            const done = Deferred.unsafeMake<string, UpstreamFailure>(FiberId.none)
            slots.set(key, { _tag: "Fetching", done })
            // A daemon: a caller that goes away does not cancel the fetch the others wait for.
            return Effect.zipRight(Effect.forkDaemon(refresh(key, account, done)), Deferred.await(done))
          })
        )
    }
  })
