import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { invitationLifetime, Members } from "../../../src/services/people/Members"
import { passwordResetLifetime, Passwords } from "../../../src/services/identity/Passwords"
import { sessionIdleTimeout, sessionLifetime, Sessions } from "../../../src/services/identity/Sessions"
import { signInWindow, SignInThrottle } from "../../../src/services/identity/SignInThrottle"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"

// What the contract suites cannot check on PostgreSQL (its clock is the database's): expiry in the
// in-memory backings, which read the Effect Clock, so the TestClock moves time.
const People = Layer.mergeAll(Sessions.memory, Members.memory, Passwords.memory, SignInThrottle.memory).pipe(Layer.provideMerge(Workspaces.memory))

describe("expiry in the in-memory people stores", () => {
  it.effect("a session ends after the idle timeout, and at its lifetime however often it is used", () =>
    Effect.gen(function*() {
      const sessions = yield* Sessions
      const idle = yield* sessions.open("operator")
      yield* TestClock.adjust(Duration.sum(sessionIdleTimeout, "1 second"))
      expect(yield* sessions.resolve(idle.id)).toEqual(Option.none())

      const busy = yield* sessions.open("operator")
      const hours = Duration.toHours(sessionLifetime)
      for (let hour = 1; hour < hours; hour++) {
        yield* TestClock.adjust("1 hour")
        expect(Option.isSome(yield* sessions.resolve(busy.id)), `hour ${hour}`).toBe(true)
      }
      yield* TestClock.adjust("1 hour")
      expect(yield* sessions.resolve(busy.id)).toEqual(Option.none())
    }).pipe(Effect.provide(People)))

  it.effect("an invitation link expires after its lifetime", () =>
    Effect.gen(function*() {
      const members = yield* Members
      const workspace = yield* Effect.flatMap(Workspaces, (w) => w.create("Expiry", {}))
      const invitation = yield* members.invite(workspace.id, { email: "late@example.com", role: "member" })
      yield* TestClock.adjust(Duration.subtract(invitationLifetime, "1 second"))
      expect((yield* members.invitation(invitation.token)).email).toBe("late@example.com")
      yield* TestClock.adjust("1 second")
      const gone = yield* Effect.flip(members.acceptWithNewAccount(invitation.token, "correct horse battery staple", undefined))
      expect(gone._tag === "InvitationGone" && gone.reason).toBe("expired")
    }).pipe(Effect.provide(People)))

  it.effect("a password-reset link expires after an hour", () =>
    Effect.gen(function*() {
      const members = yield* Members
      const passwords = yield* Passwords
      const workspace = yield* Effect.flatMap(Workspaces, (w) => w.create("Reset expiry", {}))
      const invitation = yield* members.invite(workspace.id, { email: "reset@example.com", role: "member" })
      yield* members.acceptWithNewAccount(invitation.token, "correct horse battery staple", undefined)
      const link = yield* passwords.issueReset("reset@example.com")
      yield* TestClock.adjust(Duration.subtract(passwordResetLifetime, "1 second"))
      expect((yield* passwords.resetLink(link.token)).email).toBe("reset@example.com")
      yield* TestClock.adjust("1 second")
      const gone = yield* Effect.flip(passwords.useReset(link.token, "another long passphrase"))
      expect(gone._tag === "ResetLinkGone" && gone.reason).toBe("expired")
      expect(Option.isSome(yield* members.verify("reset@example.com", "correct horse battery staple"))).toBe(true)
    }).pipe(Effect.provide(People)))

  it.effect("a throttled email and address are let in again when their oldest counted failure leaves the window", () =>
    Effect.gen(function*() {
      const throttle = yield* SignInThrottle
      const attempt = { email: "pat@example.com", address: "10.0.0.1" }
      yield* throttle.reserve(attempt)
      yield* TestClock.adjust("5 minutes")
      for (let i = 0; i < 4; i++) yield* throttle.reserve(attempt)
      const refused = yield* Effect.flip(throttle.reserve(attempt))
      expect(refused._tag === "SignInThrottled" && refused.retryAfterSeconds).toBe(Duration.toSeconds(signInWindow) - 300)
      yield* TestClock.adjust(Duration.subtract(signInWindow, "5 minutes"))
      yield* throttle.reserve(attempt)
    }).pipe(Effect.provide(People)))
})
