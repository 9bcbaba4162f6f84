import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Option } from "effect"
import type { SessionView } from "../api/consoleApi"
import { ConsoleError, unavailable } from "../api/errors/consoleError"
import { AppConfig } from "../config"
import { normalizeEmail } from "../domain/console"
import { AuditLog } from "../services/workspaces/AuditLog"
import { Members, type Person } from "../services/people/Members"
import { sessionLifetime, Sessions } from "../services/identity/Sessions"
import { type SignInReservation, SignInThrottle } from "../services/identity/SignInThrottle"
import type { StorageFailure } from "../platform/StorageFailure"
import { Workspaces } from "../services/workspaces/Workspaces"
import { clientAddress, setSessionCookie } from "./consoleViews"

/** Storage failures answer 503 here; every other refusal is already a ConsoleError. */
export const or503 = <A, R>(effect: Effect.Effect<A, StorageFailure | ConsoleError, R>): Effect.Effect<A, ConsoleError, R> =>
  Effect.mapError(effect, (error) => (error._tag === "StorageFailure" ? unavailable() : error))

/**
 * What signing in to the console is, shared by the sign-in endpoint and the account pages (an invitation
 * accepted by signing in on its page, a reset link used): the throttled, audited check of a person's
 * password, and the session opened with its cookie and view.
 */
export const makeConsoleSignIn = Effect.gen(function*() {
  const config = yield* AppConfig
  const members = yield* Members
  const sessions = yield* Sessions
  const throttle = yield* SignInThrottle
  const audit = yield* AuditLog
  const workspaces = yield* Workspaces
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

  /** Opens a session, sets its cookie on the answer, and answers its view. */
  const openSession = (who: Person | "operator") =>
    Effect.gen(function*() {
      const session = yield* sessions.open(who === "operator" ? "operator" : { personId: who.id })
      yield* setSessionCookie(config, { id: session.id, maxAgeSeconds })
      return yield* view(who)
    })

  /** Sign-in events go to the audit log of every workspace the person belongs to (none for the operator or an unknown email). */
  const auditSignIn = (
    who: Person | "operator" | null,
    label: string,
    action: "session.signed_in" | "session.sign_in_failed" | "session.signed_out",
    target: string | null = null
  ) =>
    Effect.gen(function*() {
      const address = yield* clientAddress
      const ids = who === null || who === "operator" ? [] : (yield* members.workspacesOf(who.id)).map((w) => w.id)
      yield* audit.record({ workspaceIds: ids, actor: label, action, target, address })
    })

  /** 429 with retry-after: the attempt is refused before any password is looked at. */
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

  /**
   * Counts an attempt (a person's, by email, or the operator's) as a failed sign-in of the client address
   * before any password is looked at, or refuses it (429) when the email and address together, or the
   * address, spent their failures. Give the reservation back (`succeeded`) when the attempt was no
   * failure; a wrong password leaves it counted.
   */
  const admit = (who: { readonly email: string } | "operator") =>
    Effect.flatMap(clientAddress, (address) =>
      throttle.reserve(who === "operator" ? { operator: true, address } : { email: who.email, address }).pipe(
        Effect.catchTag("SignInThrottled", (t) => throttled(t.retryAfterSeconds))
      ))

  /** The attempt was no failure: its reservation is given back (and the email's failures from this address cleared). */
  const succeeded = (reservation: SignInReservation) => throttle.succeeded(reservation)

  /** A failed attempt for an email (already counted when admitted): audited in the person's workspaces, never the password. */
  const failed = (email: string, target: string | null = null) =>
    Effect.gen(function*() {
      const known = yield* members.personByEmail(email)
      yield* auditSignIn(Option.getOrNull(known), normalizeEmail(email), "session.sign_in_failed", target)
    })

  /**
   * A person's email and password, as the sign-in page checks them: counted first, then the password (an
   * unknown email costs and answers what a wrong password does), the outcome counted and audited. `target`
   * says where it happened when not on the sign-in page.
   */
  const checkPassword = (email: string, password: string, target: string | null = null) =>
    Effect.gen(function*() {
      const reservation = yield* admit({ email })
      const person = yield* members.verify(email, password)
      if (Option.isNone(person)) {
        yield* failed(email, target)
        return person
      }
      yield* succeeded(reservation)
      yield* auditSignIn(person.value, person.value.email, "session.signed_in", target)
      return person
    })

  return { view, openSession, auditSignIn, admit, succeeded, failed, checkPassword }
})
