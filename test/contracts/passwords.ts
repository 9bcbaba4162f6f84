import { expect, type Vitest } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { hashToken } from "../../src/domain/password"
import { Members } from "../../src/services/people/Members"
import { passwordResetLifetime, Passwords } from "../../src/services/identity/Passwords"
import { Sessions } from "../../src/services/identity/Sessions"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { uniqueEmail } from "./members"
import { uniqueName } from "./workspaces"

const password = "correct horse battery staple"
const reason = (error: { readonly _tag: string; readonly reason?: string }) => error.reason ?? error._tag

/** The behaviour both backings of Passwords must show, over the same people and sessions as Members and Sessions. */
export const passwordsContract = (it: Vitest.MethodsNonLive<Passwords | Sessions | Members | Workspaces, true>) => {
  /** A person with an account, active in a new workspace. */
  const person = Effect.gen(function*() {
    const members = yield* Members
    const owner = yield* Effect.flatMap(Workspaces, (workspaces) => workspaces.create(uniqueName("Passwords"), {}))
    const email = uniqueEmail("pat")
    const invitation = yield* members.invite(owner.id, { email, name: "Pat", role: "admin" })
    const { person } = yield* members.acceptWithNewAccount(invitation.token, password, undefined)
    return { owner, person, email }
  })

  it.effect("a person changes their own password with the current one; their other sessions end, this one stays", () =>
    Effect.gen(function*() {
      const passwords = yield* Passwords
      const sessions = yield* Sessions
      const members = yield* Members
      const { email, person: pat } = yield* person
      const here = yield* sessions.open({ personId: pat.id })
      const elsewhere = yield* sessions.open({ personId: pat.id })
      const bystander = yield* sessions.open("operator")
      const next = "a new and longer passphrase"

      expect((yield* Effect.flip(passwords.change(pat.id, "not the password at all", next, hashToken(here.id))))._tag).toBe("WrongPassword")
      expect(yield* members.verify(email, password)).toEqual(Option.some(pat))
      expect(Option.isSome(yield* sessions.resolve(elsewhere.id))).toBe(true)

      yield* passwords.change(pat.id, password, next, hashToken(here.id))
      expect(yield* members.verify(email, next)).toEqual(Option.some(pat))
      expect(yield* members.verify(email, password)).toEqual(Option.none())
      expect(Option.isSome(yield* sessions.resolve(here.id))).toBe(true)
      expect(yield* sessions.resolve(elsewhere.id)).toEqual(Option.none())
      expect(Option.isSome(yield* sessions.resolve(bystander.id))).toBe(true)
    }))

  it.effect("two changes at once from the same current password: one wins, the other is refused, not lost unseen", () =>
    Effect.gen(function*() {
      const passwords = yield* Passwords
      const sessions = yield* Sessions
      const members = yield* Members
      const { email, person: pat } = yield* person
      const here = hashToken((yield* sessions.open({ personId: pat.id })).id)
      const outcomes = yield* Effect.all(
        ["first new passphrase", "second new passphrase"].map((next) => Effect.either(passwords.change(pat.id, password, next, here))),
        { concurrency: 2 }
      )
      const won = outcomes.flatMap((outcome, index) => (outcome._tag === "Right" ? [index] : []))
      expect(won).toHaveLength(1)
      expect(outcomes.find((outcome) => outcome._tag === "Left")).toMatchObject({ left: { _tag: "WrongPassword" } })
      const winner = ["first new passphrase", "second new passphrase"][won[0]!]!
      expect(yield* members.verify(email, winner)).toEqual(Option.some(pat))
    }))

  it.effect("the operator's reset link: one hour, one use, the newest only; it sets the password and ends every session", () =>
    Effect.gen(function*() {
      const passwords = yield* Passwords
      const sessions = yield* Sessions
      const members = yield* Members
      const { email, owner, person: pat } = yield* person
      const session = yield* sessions.open({ personId: pat.id })
      const before = Date.now()
      const first = yield* passwords.issueReset(email)
      expect(first.person).toEqual(pat)
      expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const lifetime = first.expiresAt.getTime() - before
      expect(lifetime).toBeGreaterThanOrEqual(Duration.toMillis(passwordResetLifetime) - 1000)
      expect(lifetime).toBeLessThanOrEqual(Duration.toMillis(passwordResetLifetime) + 60_000)
      expect(yield* passwords.resetLink(first.token)).toEqual({ email: pat.email, expiresAt: first.expiresAt })
      // Issuing the link changes nothing yet.
      expect(yield* members.verify(email, password)).toEqual(Option.some(pat))
      expect(Option.isSome(yield* sessions.resolve(session.id))).toBe(true)

      const second = yield* passwords.issueReset(` ${email.toUpperCase()} `)
      expect(reason(yield* Effect.flip(passwords.resetLink(first.token)))).toBe("used")
      expect(reason(yield* Effect.flip(passwords.useReset(first.token, "never set by the old link")))).toBe("used")

      expect(yield* passwords.useReset(second.token, "the reset passphrase")).toEqual(pat)
      expect(yield* members.verify(email, "the reset passphrase")).toEqual(Option.some(pat))
      expect(yield* members.verify(email, password)).toEqual(Option.none())
      expect(yield* sessions.resolve(session.id)).toEqual(Option.none())
      expect(reason(yield* Effect.flip(passwords.useReset(second.token, "a second use of the link")))).toBe("used")
      // Memberships are untouched.
      expect(yield* members.workspacesOf(pat.id)).toEqual([{ id: owner.id, name: owner.name, role: "admin" }])
    }))

  it.effect("no reset link for an email without an account; unknown and malformed links are unknown", () =>
    Effect.gen(function*() {
      const passwords = yield* Passwords
      const members = yield* Members
      const owner = yield* Effect.flatMap(Workspaces, (workspaces) => workspaces.create(uniqueName("NoAccount"), {}))
      const invitedOnly = uniqueEmail("invited")
      yield* members.invite(owner.id, { email: invitedOnly, role: "member" })
      for (const email of [invitedOnly, uniqueEmail("nobody")]) {
        expect((yield* Effect.flip(passwords.issueReset(email)))._tag).toBe("NoAccount")
      }
      expect(reason(yield* Effect.flip(passwords.resetLink("C".repeat(43))))).toBe("unknown")
      expect(reason(yield* Effect.flip(passwords.useReset("not a token", "whatever passphrase")))).toBe("unknown")
    }))
}
