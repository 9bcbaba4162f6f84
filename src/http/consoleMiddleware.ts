import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { ConsoleAuth, ConsoleOrigin } from "../api/consoleApi"
import { ConsoleError, forbidden, unauthenticated, unavailable } from "../api/errors/consoleError"
import { AppConfig } from "../config"
import { Sessions } from "../services/identity/Sessions"

const safeMethods: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * Cross-site request forgery: a state-changing console call must carry the Origin of PUBLIC_URL.
 * Browsers always send Origin on such requests; a missing one is refused too.
 */
export const ConsoleOriginLive = Layer.effect(
  ConsoleOrigin,
  Effect.map(AppConfig, (config) => {
    const expected = new URL(config.publicUrl).origin
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      safeMethods.has(request.method) || request.headers.origin === expected
        ? Effect.void
        : Effect.fail(forbidden(`This request must come from ${expected} (Origin header); cross-site requests are refused.`)))
  })
)

/** The session cookie, checked against PostgreSQL on every call (sign-out and removal count at once). */
export const ConsoleAuthLive = Layer.effect(
  ConsoleAuth,
  Effect.map(Sessions, (sessions) =>
    ConsoleAuth.of({
      session: (id) =>
        sessions.resolve(Redacted.value(id)).pipe(
          Effect.mapError((): ConsoleError => unavailable()),
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(unauthenticated()), onSome: Effect.succeed }))
        )
    }))
)
