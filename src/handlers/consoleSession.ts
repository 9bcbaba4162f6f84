import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { WorkspaceApi } from "../api/Api"
import { sessionCookie, type SessionView } from "../api/consoleApi"
import { ConsoleError, unauthenticated, unavailable } from "../api/errors/consoleError"
import { AppConfig } from "../config"
import type { ConsoleActor } from "../domain/console"
import { AuditLog } from "../services/AuditLog"
import { LocalSecrets } from "../services/LocalSecrets"
import { Members, type Person } from "../services/Members"
import { sessionLifetime, Sessions } from "../services/Sessions"
import { SignInThrottle } from "../services/SignInThrottle"
import type { StorageFailure } from "../services/StorageFailure"
import { Workspaces } from "../services/Workspaces"
import { clientAddress, setSessionCookie } from "./consoleViews"

const digest = (value: string) => crypto.createHash("sha256").update(value, "utf8").digest()

/** Storage failures answer 503 here; every other refusal is already a ConsoleError. */
const or503 = <A, R>(effect: Effect.Effect<A, StorageFailure | ConsoleError, R>): Effect.Effect<A, ConsoleError, R> =>
  Effect.mapError(effect, (error) => (error._tag === "StorageFailure" ? unavailable() : error))

const invalidCredentials = () =>
  new ConsoleError({ status: 401, code: "invalid_credentials", message: "Email or password is wrong." })

export const ConsoleSessionHandlers = HttpApiBuilder.group(WorkspaceApi, "consoleSession", (handlers) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const members = yield* Members
    const sessions = yield* Sessions
    const throttle = yield* SignInThrottle
    const audit = yield* AuditLog
    const workspaces = yield* Workspaces
    const adminToken = Option.isSome(config.adminToken) ? config.adminToken.value : yield* (yield* LocalSecrets).adminToken
    const expectedAdmin = digest(Redacted.value(adminToken))
    const maxAgeSeconds = Duration.toSeconds(sessionLifetime)

    /** The session view: the person and their workspaces, or the operator and the newest workspaces. */
    const view = (who: Person | "operator"): Effect.Effect<typeof SessionView.Type, StorageFailure> =>
      who === "operator"
        ? Effect.map(workspaces.list({ limit: 50 }), (page) => ({
          member: null,
          operator: true,
          workspaces: page.data.map((w) => ({ id: w.id, name: w.name, role: "admin" as const }))
        }))
        : Effect.map(members.workspacesOf(who.id), (list) => ({
          member: { id: who.id, email: who.email, name: who.name },
          operator: false,
          workspaces: list
        }))

    const actorView = (actor: ConsoleActor) =>
      view(actor.kind === "operator" ? "operator" : { id: actor.personId, email: actor.email, name: actor.name })

    const signedIn = (who: Person | "operator") =>
      Effect.gen(function*() {
        const session = yield* sessions.open(who === "operator" ? "operator" : { personId: who.id })
        yield* setSessionCookie(config, { id: session.id, maxAgeSeconds })
        return yield* view(who)
      })

    /** Sign-in events go to the audit log of every workspace the person belongs to. */
    const auditSignIn = (who: Person | "operator" | null, label: string, action: "session.signed_in" | "session.sign_in_failed" | "session.signed_out") =>
      Effect.gen(function*() {
        const address = yield* clientAddress
        const ids = who === null || who === "operator" ? [] : (yield* members.workspacesOf(who.id)).map((w) => w.id)
        yield* audit.record({ workspaceIds: ids, actor: label, action, target: null, address })
      })

    const throttled = (retryAfterSeconds: number) =>
      Effect.zipRight(
        HttpApp.appendPreResponseHandler((_request, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(retryAfterSeconds)))),
        Effect.fail(new ConsoleError({
          status: 429,
          code: "too_many_attempts",
          message: `Too many failed sign-ins. Try again in ${retryAfterSeconds} seconds.`
        }))
      )

    const currentActor = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const id = request.cookies[sessionCookie]
      return id === undefined || id === "" ? Option.none<ConsoleActor>() : yield* sessions.resolve(id)
    })

    return handlers
      .handle("signIn", ({ payload }) =>
        or503(Effect.gen(function*() {
          const address = yield* clientAddress
          const subject = "email" in payload ? payload.email : "operator"
          yield* throttle.check(subject, address).pipe(
            Effect.catchTag("SignInThrottled", (t) => throttled(t.retryAfterSeconds))
          )
          const who: Option.Option<Person | "operator"> = "email" in payload
            ? yield* members.verify(payload.email, payload.password)
            : crypto.timingSafeEqual(digest(payload.adminToken), expectedAdmin)
            ? Option.some("operator" as const)
            : Option.none()
          if (Option.isNone(who)) {
            yield* throttle.failed(subject, address)
            const known = "email" in payload ? yield* members.personByEmail(payload.email) : Option.none()
            yield* auditSignIn(Option.getOrNull(known), "email" in payload ? payload.email.trim().toLowerCase() : "operator", "session.sign_in_failed")
            return yield* Effect.fail(invalidCredentials())
          }
          yield* throttle.succeeded(subject)
          yield* auditSignIn(who.value, who.value === "operator" ? "operator" : who.value.email, "session.signed_in")
          return yield* signedIn(who.value)
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
            yield* auditSignIn(who, who === "operator" ? "operator" : who.email, "session.signed_out")
          }
          yield* setSessionCookie(config, null)
        })))
      .handle("invitation", ({ path }) =>
        or503(members.invitation(path.token).pipe(
          Effect.map((info) => ({ ...info, expiresAt: info.expiresAt.toISOString() })),
          Effect.catchTag("InvitationGone", (gone) => Effect.fail(invitationGone(gone.reason)))
        )))
      .handle("acceptInvitation", ({ path, payload }) =>
        or503(Effect.gen(function*() {
          const { person, workspaceId } = yield* members.accept(path.token, payload.password, payload.name).pipe(
            Effect.catchTag("InvitationGone", (gone) => Effect.fail(invitationGone(gone.reason)))
          )
          yield* audit.record({
            workspaceIds: [workspaceId],
            actor: person.email,
            action: "invitation.accepted",
            target: person.email,
            address: yield* clientAddress
          })
          return yield* signedIn(person)
        })))
  }))

const invitationGone = (reason: "unknown" | "used" | "expired") =>
  reason === "unknown"
    ? new ConsoleError({ status: 404, code: "invitation_not_found", message: "This invitation link is not valid." })
    : new ConsoleError({
      status: 410,
      code: reason === "used" ? "invitation_used" : "invitation_expired",
      message: reason === "used"
        ? "This invitation link was already used. Ask an administrator for a new one."
        : "This invitation link has expired. Ask an administrator for a new one."
    })
