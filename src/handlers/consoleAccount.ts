import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { WorkspaceApi } from "../api/Api"
import { type AcceptInvitation, CurrentConsoleActor, sessionCookie } from "../api/consoleApi"
import { ConsoleError, forbidden } from "../api/errors/consoleError"
import type { ConsoleActor } from "../domain/console"
import { AuditLog } from "../services/workspaces/AuditLog"
import { type Accepted, InvitationGone, Members, type Person } from "../services/people/Members"
import { Passwords, ResetLinkGone } from "../services/identity/Passwords"
import { Sessions } from "../services/identity/Sessions"
import { makeConsoleSignIn, or503 } from "./consoleSignIn"
import { clientAddress } from "./consoleViews"

/** Where a sign-in on an invitation's page happened, as the audit log's target says (never which workspace invited). */
const onInvitationPage = "invitation link"

/**
 * Every way an invitation is not accepted answers this, whichever it was (a new password for an email that
 * has an account, a wrong current password, nobody signed in, someone else signed in): the answer tells
 * nothing about the account. Nothing changed; the link still works.
 */
const notAccepted = () =>
  new ConsoleError({
    status: 401,
    code: "invitation_not_accepted",
    message: "The invitation was not accepted. If this email already has an account, sign in with its current password " +
      "(or sign in first and open the link again); otherwise choose a password of at least 12 characters."
  })

const linkGone = (what: "invitation" | "password-reset", reason: "unknown" | "used" | "expired") =>
  reason === "unknown"
    ? new ConsoleError({ status: 404, code: `${what === "invitation" ? "invitation" : "reset_link"}_not_found`, message: `This ${what} link is not valid.` })
    : new ConsoleError({
      status: 410,
      code: `${what === "invitation" ? "invitation" : "reset_link"}_${reason}`,
      message: reason === "used"
        ? `This ${what} link was already used. Ask ${what === "invitation" ? "an administrator" : "the operator"} for a new one.`
        : `This ${what} link has expired. Ask ${what === "invitation" ? "an administrator" : "the operator"} for a new one.`
    })

/** Invitations, a person's own password change, and the operator's reset links (the `consoleAccount` group). */
export const ConsoleAccountHandlers = HttpApiBuilder.group(WorkspaceApi, "consoleAccount", (handlers) =>
  Effect.gen(function*() {
    const members = yield* Members
    const passwords = yield* Passwords
    const sessions = yield* Sessions
    const audit = yield* AuditLog
    const signIn = yield* makeConsoleSignIn

    /** The person signed in on this request, if any (the operator is nobody here). */
    const signedInPerson = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const id = request.cookies[sessionCookie]
      const actor = id === undefined || id === "" ? Option.none<ConsoleActor>() : yield* sessions.resolve(id)
      return Option.flatMap(actor, (a) => (a.kind === "person" ? Option.some(a) : Option.none()))
    })

    /** Audits an action of a person in every workspace they belong to. */
    const auditPerson = (person: Person, action: "password.changed" | "password.reset") =>
      Effect.gen(function*() {
        const workspaceIds = (yield* members.workspacesOf(person.id)).map((w) => w.id)
        yield* audit.record({ workspaceIds, actor: person.email, action, target: person.email, address: yield* clientAddress })
      })

    /** An accepted invitation is audited in the workspace joined, by the person. */
    const auditAccepted = ({ person, workspaceId }: Accepted) =>
      Effect.flatMap(clientAddress, (address) =>
        audit.record({ workspaceIds: [workspaceId], actor: person.email, action: "invitation.accepted", target: person.email, address }))

    const invitationGone = <A, E, R>(effect: Effect.Effect<A, E | InvitationGone, R>) =>
      Effect.catchIf(effect, (error): error is InvitationGone => error instanceof InvitationGone, (gone) =>
        Effect.fail(linkGone("invitation", gone.reason)))

    const resetLinkGone = <A, E, R>(effect: Effect.Effect<A, E | ResetLinkGone, R>) =>
      Effect.catchIf(effect, (error): error is ResetLinkGone => error instanceof ResetLinkGone, (gone) =>
        Effect.fail(linkGone("password-reset", gone.reason)))

    /**
     * Accepts an invitation in the one way the payload (or the session) proves: a new account, the invited
     * person's current password, or their session.
     */
    const accept = (token: string, email: string, payload: typeof AcceptInvitation.Type) =>
      Effect.gen(function*() {
        if (payload.currentPassword !== undefined) {
          // A sign-in on the invitation's page: the sign-in page's check, throttle and audit.
          const person = yield* signIn.checkPassword(email, payload.currentPassword, onInvitationPage)
          if (Option.isNone(person)) return yield* Effect.fail(notAccepted())
          const accepted = yield* members.acceptAs(token, person.value.id)
          return { accepted, signIn: true }
        }
        if (payload.password !== undefined) {
          const reservation = yield* signIn.admit({ email })
          const accepted = yield* members.acceptWithNewAccount(token, payload.password, payload.name).pipe(
            // An attempt to set the password of an existing account counts and is audited as a failed sign-in.
            Effect.catchTag("AccountExists", () => Effect.zipRight(signIn.failed(email, onInvitationPage), Effect.fail(notAccepted())))
          )
          yield* signIn.succeeded(reservation)
          return { accepted, signIn: true }
        }
        const person = yield* signedInPerson
        if (Option.isNone(person)) return yield* Effect.fail(notAccepted())
        return { accepted: yield* members.acceptAs(token, person.value.personId), signIn: false }
      }).pipe(
        Effect.catchTag("NotInvitee", () => Effect.fail(notAccepted())),
        invitationGone
      )

    return handlers
      .handle("invitation", ({ path }) =>
        or503(members.invitation(path.token).pipe(
          Effect.map((info) => ({ ...info, expiresAt: info.expiresAt.toISOString() })),
          invitationGone
        )))
      .handle("acceptInvitation", ({ path, payload }) =>
        or503(Effect.gen(function*() {
          if (payload.password !== undefined && payload.currentPassword !== undefined) {
            return yield* Effect.fail(new ConsoleError({
              status: 400,
              code: "invalid_value",
              message: "Give either password (to create your account) or currentPassword (to sign in to it), not both.",
              field: "currentPassword"
            }))
          }
          const info = yield* invitationGone(members.invitation(path.token))
          const { accepted, signIn: opensSession } = yield* accept(path.token, info.email, payload)
          yield* auditAccepted(accepted)
          return yield* opensSession ? signIn.openSession(accepted.person) : signIn.view(accepted.person)
        })))
      .handle("changePassword", ({ payload }) =>
        or503(Effect.gen(function*() {
          const actor = yield* CurrentConsoleActor
          if (actor.kind !== "person") return yield* Effect.fail(forbidden("The operator signs in with ADMIN_TOKEN and has no password to change."))
          // The current password is checked like a sign-in: a stolen session cannot guess it faster.
          const reservation = yield* signIn.admit({ email: actor.email })
          yield* passwords.change(actor.personId, payload.currentPassword, payload.newPassword, actor.sessionHash).pipe(
            Effect.catchTag("WrongPassword", () =>
              Effect.zipRight(
                signIn.failed(actor.email, "password change"),
                Effect.fail(new ConsoleError({
                  status: 400,
                  code: "wrong_password",
                  message: "currentPassword is not your current password.",
                  field: "currentPassword"
                }))
              ))
          )
          yield* signIn.succeeded(reservation)
          yield* auditPerson({ id: actor.personId, email: actor.email, name: actor.name }, "password.changed")
        })))
      .handle("passwordReset", ({ path }) =>
        or503(resetLinkGone(passwords.resetLink(path.token)).pipe(
          Effect.map((info) => ({ email: info.email, expiresAt: info.expiresAt.toISOString() }))
        )))
      .handle("resetPassword", ({ path, payload }) =>
        or503(Effect.gen(function*() {
          // The link first (one indexed read): no scrypt is spent on a token that was never issued.
          yield* resetLinkGone(passwords.resetLink(path.token))
          const person = yield* resetLinkGone(passwords.useReset(path.token, payload.password))
          yield* auditPerson(person, "password.reset")
          return yield* signIn.openSession(person)
        })))
  }))
