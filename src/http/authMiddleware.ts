import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Either, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { AppConfig } from "../config"
import type { Scope } from "../domain/apiKey"
import { AdminAuth, bearerToken, ExportAuth, ProviderAAuth, ProviderBAuth, ProviderCAuth } from "../api/security"
import { type AuthRefused, AuthService } from "../services/identity/AuthService"
import { type Principal } from "../domain/principal"
import { logDatabaseUnavailable } from "../platform/Database"
import { LocalSecrets } from "../platform/LocalSecrets"
import { succeeded } from "../services/forwarding/decidedNow"
import { RateLimits } from "../services/limits/RateLimits"
import { providerA } from "../providers/providerA/dialect"
import { providerB } from "../providers/providerB/dialect"
import { providerC } from "../providers/providerC/dialect"
import { admissionHeaders, exportsStyle, renderRefusal } from "../providers/render"
import { spansWhen } from "../platform/traceSpans"
import { CredentialThrottle, type CredentialsThrottled } from "../services/identity/CredentialThrottle/index"
import { retryHeaders } from "../providers/rateLimitHeaders"
import { type ErrorFormat, type FormatErrors, problemAs } from "../api/errors/errorFormat"
import type { Problem } from "../domain/problem"
import type { StorageFailure } from "../platform/StorageFailure"

/** A refused credential: the endpoint renders the problem in its format, with these headers. */
export interface CredentialRefusal {
  /** Tells it apart from the refusals of serving (the forwarding lane answers both from one handler). */
  readonly _tag: "CredentialRefusal"
  readonly problem: Problem
  readonly headers: Readonly<Record<string, string>>
}

/**
 * The key a request carries. The messages protocol's libraries may send it as `x-api-key`; when a
 * request carries two different keys we refuse rather than guess which one was meant.
 */
const presentedKey = (headers: Readonly<Record<string, string | undefined>>, allowXApiKey: boolean) => {
  const bearer = bearerToken(headers)
  const alternative = allowXApiKey ? headers["x-api-key"]?.trim() || undefined : undefined
  return { key: bearer ?? alternative, conflict: bearer !== undefined && alternative !== undefined && bearer !== alternative }
}

const noHeaders: Readonly<Record<string, string>> = {}

const conflicting: CredentialRefusal = {
  _tag: "CredentialRefusal",
  problem: {
    status: 401,
    code: "invalid_api_key",
    message: "The request carries two different API keys (Authorization and x-api-key). Send one."
  },
  headers: noHeaders
}

const unavailable: CredentialRefusal = {
  _tag: "CredentialRefusal",
  problem: { status: 503, code: "unavailable", message: "The service cannot check API keys right now. Retry shortly." },
  headers: noHeaders
}

/** Past the failed-credential limit: a credential not known to be valid is refused until the window ends. */
const tooManyFailures = (retryAfterMs: number): CredentialRefusal => ({
  _tag: "CredentialRefusal",
  problem: {
    status: 429,
    code: "too_many_failed_credentials",
    message: `Too many invalid credentials came from this address or its network lately (a valid one is still accepted). Retry in ${
      Math.ceil(retryAfterMs / 1_000)
    } s.`
  },
  headers: retryHeaders(retryAfterMs)
})

/**
 * The caller of a request with these headers from `address` (its client address), or why not: 401, 429
 * for a key not known to be valid once the address spent its failed credentials (answered without a
 * lookup), or 503 when keys cannot be checked; with the headers to answer with.
 */
export const checkKey = (
  auth: AuthService["Type"],
  address: string | undefined,
  headers: Readonly<Record<string, string | undefined>>,
  scope: Scope,
  allowXApiKey: boolean
): Effect.Effect<Principal, CredentialRefusal> => {
  const { conflict, key } = presentedKey(headers, allowXApiKey)
  if (conflict) return Effect.fail(conflicting)
  const authenticated = auth.authenticate(key, scope, address)
  // A key known valid is already a success (an Exit): nothing to catch, no frame for it.
  return succeeded(authenticated)
    ? Effect.succeed(authenticated.value)
    : Effect.catchAllCause(authenticated, refusedCredential)
}

/**
 * A failed authentication as the caller's refusal; a defect or interruption passes. One handler made once, not
 * `catchTags` with its cases and closures made for every request.
 */
const refusedCredential = (
  cause: Cause.Cause<AuthRefused | CredentialsThrottled | StorageFailure>
): Effect.Effect<never, CredentialRefusal> => {
  const failure = Cause.failureOrCause(cause)
  if (Either.isRight(failure)) return Effect.failCause(failure.right)
  const refused = failure.left
  switch (refused._tag) {
    case "AuthRefused":
      return Effect.fail({
        _tag: "CredentialRefusal",
        problem: {
          status: 401,
          code: refused.reason === "scope" ? "insufficient_scope" : "invalid_api_key",
          message: refused.description
        },
        headers: noHeaders
      })
    case "CredentialsThrottled":
      return Effect.fail(tooManyFailures(refused.retryAfterMs))
    case "StorageFailure":
      return Effect.zipRight(logDatabaseUnavailable(refused.cause), Effect.fail(unavailable))
  }
}

/** The client address `withClientAddress` (src/http/clientAddress.ts) set on the request. */
const addressOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => Option.getOrUndefined(request.remoteAddress)

const withHeaders = (headers: Readonly<Record<string, string>>) =>
  HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))

/** A refusal in the endpoint's format, its headers (retry hints) on the answer. */
const refuseAs = <F extends ErrorFormat>(format: F, { headers, problem }: CredentialRefusal): Effect.Effect<never, FormatErrors[F]> =>
  headers === noHeaders
    ? Effect.fail(problemAs(format, problem))
    : Effect.zipRight(withHeaders(headers), Effect.fail(problemAs(format, problem)))

const authenticate = <F extends ErrorFormat>(format: F, scope: Scope, allowXApiKey = false) =>
  Effect.map(Effect.all([AuthService, AppConfig]), ([auth, config]) => {
    const span = spansWhen(config)
    return () =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Effect.catchAll(
          checkKey(auth, addressOf(request), request.headers, scope, allowXApiKey).pipe(span("auth")),
          (refusal) => refuseAs(format, refusal)
        ))
  })

/**
 * Exports count against the workspace's usage-export limit right after authentication; the
 * rate-limit headers go on whatever the export answers. Exports carry no model tokens: their token
 * budget is reported but not consumed.
 */
export const ExportAuthLive = Layer.effect(
  ExportAuth,
  Effect.gen(function*() {
    const check = yield* authenticate("export", "USAGE_EXPORT_API")
    const rateLimits = yield* RateLimits
    return ExportAuth.of({
      bearer: () =>
        Effect.flatMap(check(), (principal) =>
          rateLimits.admit({ principal, family: "usage_export", tokens: 0 }).pipe(
            Effect.matchEffect({
              onFailure: (refusal) => {
                const { headers, problem } = renderRefusal(exportsStyle, refusal)
                return Effect.zipRight(withHeaders(headers), Effect.fail(problemAs("export", problem)))
              },
              onSuccess: ({ readings }) => Effect.as(withHeaders(admissionHeaders(exportsStyle, readings)), principal)
            })
          ))
    })
  })
)

export const ProviderAAuthLive = Layer.effect(
  ProviderAAuth,
  Effect.map(authenticate(providerA.id, "COMPLETION_API", providerA.keyHeaders.xApiKey), (check) => ProviderAAuth.of({ bearer: () => check() }))
)

export const ProviderBAuthLive = Layer.effect(
  ProviderBAuth,
  Effect.map(authenticate(providerB.id, "COMPLETION_API", providerB.keyHeaders.xApiKey), (check) =>
    ProviderBAuth.of({ bearer: () => check(), xApiKey: () => check() }))
)

export const ProviderCAuthLive = Layer.effect(
  ProviderCAuth,
  Effect.map(authenticate(providerC.id, "COMPLETION_API", providerC.keyHeaders.xApiKey), (check) => ProviderCAuth.of({ bearer: () => check() }))
)

const digest = (value: string) => crypto.createHash("sha256").update(value).digest()

/**
 * The operator's token: ADMIN_TOKEN, or the one generated under DATA_DIR. Compared in constant time. The
 * right token always passes; a wrong one is a failed credential of its address (admin tokens counted
 * apart from API keys), 429 once the address spent them; none at all is 401 and not counted.
 */
export const AdminAuthLive = Layer.effect(
  AdminAuth,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const throttle = yield* CredentialThrottle
    const token = Option.isSome(config.adminToken)
      ? config.adminToken.value
      : yield* (yield* LocalSecrets).adminToken
    const expected = digest(Redacted.value(token))
    const refused = problemAs("admin", { status: 401, code: "unauthorized", message: "A valid admin token is required." })
    return AdminAuth.of({
      bearer: () =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const presented = bearerToken(request.headers)
          if (presented === undefined) return Effect.fail(refused)
          if (crypto.timingSafeEqual(digest(presented), expected)) return Effect.void
          return Effect.matchEffect(throttle.reserveFailure("admin_token", addressOf(request)), {
            onFailure: (throttled) => refuseAs("admin", tooManyFailures(throttled.retryAfterMs)),
            onSuccess: () => Effect.fail(refused)
          })
        })
    })
  })
)
