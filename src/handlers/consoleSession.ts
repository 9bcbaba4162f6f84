import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { WorkspaceApi } from "../api/Api"
import { sessionCookie } from "../api/consoleApi"
import { ConsoleError, unauthenticated } from "../api/errors/consoleError"
import { AppConfig } from "../config"
import type { ConsoleActor } from "../domain/console"
import { LocalSecrets } from "../platform/LocalSecrets"
import { Sessions } from "../services/identity/Sessions"
import type { StorageFailure } from "../platform/StorageFailure"
import { makeConsoleSignIn, or503 } from "./consoleSignIn"
import { setSessionCookie } from "./consoleViews"

const digest = (value: string) => crypto.createHash("sha256").update(value, "utf8").digest()

const invalidCredentials = () =>
  new ConsoleError({ status: 401, code: "invalid_credentials", message: "Email or password is wrong." })

export const ConsoleSessionHandlers = HttpApiBuilder.group(WorkspaceApi, "consoleSession", (handlers) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const sessions = yield* Sessions
    const signIn = yield* makeConsoleSignIn
    const adminToken = Option.isSome(config.adminToken) ? config.adminToken.value : yield* (yield* LocalSecrets).adminToken
    const expectedAdmin = digest(Redacted.value(adminToken))

    const actorView = (actor: ConsoleActor) =>
      signIn.view(actor.kind === "operator" ? "operator" : { id: actor.personId, email: actor.email, name: actor.name })

    const currentActor = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const id = request.cookies[sessionCookie]
      return id === undefined || id === "" ? Option.none<ConsoleActor>() : yield* sessions.resolve(id)
    })

    /**
     * The operator's sign-in: the admin token, compared in constant time, throttled per client address only
     * (nobody can lock the operator out from elsewhere).
     */
    const operatorSignIn = (token: string) =>
      Effect.gen(function*() {
        const reservation = yield* signIn.admit("operator")
        if (!crypto.timingSafeEqual(digest(token), expectedAdmin)) {
          yield* signIn.auditSignIn(null, "operator", "session.sign_in_failed")
          return yield* Effect.fail(invalidCredentials())
        }
        yield* signIn.succeeded(reservation)
        yield* signIn.auditSignIn("operator", "operator", "session.signed_in")
        return yield* signIn.openSession("operator")
      })

    return handlers
      .handle("signIn", ({ payload }) =>
        or503(Effect.gen(function*() {
          if (!("email" in payload)) return yield* operatorSignIn(payload.adminToken)
          const person = yield* signIn.checkPassword(payload.email, payload.password)
          if (Option.isNone(person)) return yield* Effect.fail(invalidCredentials())
          return yield* signIn.openSession(person.value)
        })))
      .handle("session", () =>
        or503(Effect.flatMap(currentActor, (actor) =>
          Option.isNone(actor) ? Effect.fail<ConsoleError | StorageFailure>(unauthenticated()) : actorView(actor.value))))
      .handle("signOut", () =>
        or503(Effect.gen(function*() {
          const actor = yield* currentActor
          if (Option.isSome(actor)) {
            yield* sessions.close(actor.value.sessionHash)
            const who = actor.value.kind === "operator"
              ? "operator" as const
              : { id: actor.value.personId, email: actor.value.email, name: actor.value.name }
            yield* signIn.auditSignIn(who, who === "operator" ? "operator" : who.email, "session.signed_out")
          }
          yield* setSessionCookie(config, null)
        })))
  }))
