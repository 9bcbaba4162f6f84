import { expect, type Vitest } from "@effect/vitest"
import { Effect, Option } from "effect"
import { hashToken } from "../../src/domain/password"
import { Members } from "../../src/services/people/Members"
import { Sessions } from "../../src/services/identity/Sessions"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { uniqueEmail } from "./members"
import { uniqueName } from "./workspaces"

const password = "correct horse battery staple"

/** The behaviour both backings of Sessions must show, with Members over the same people. */
export const sessionsContract = (it: Vitest.MethodsNonLive<Sessions | Members | Workspaces, true>) => {
  /** An active member of a new workspace, and the token of a second invitation not yet used. */
  const activePerson = Effect.gen(function*() {
    const members = yield* Members
    const owner = yield* Effect.flatMap(Workspaces, (workspaces) => workspaces.create(uniqueName("Sessions"), {}))
    const email = uniqueEmail("sam")
    const first = yield* members.invite(owner.id, { email, name: "Sam", role: "admin" })
    const { person } = yield* members.acceptWithNewAccount(first.token, password, undefined)
    const helper = yield* members.invite(owner.id, { email: uniqueEmail("helper"), role: "admin" })
    yield* members.acceptWithNewAccount(helper.token, password, undefined)
    return { owner, member: first.member, person, email }
  })

  it.effect("opens an operator session for a week and ends it on close", () =>
    Effect.gen(function*() {
      const sessions = yield* Sessions
      const before = Date.now()
      const opened = yield* sessions.open("operator")
      expect(opened.id).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(opened.expiresAt.getTime() - before).toBeGreaterThan(7 * 24 * 3600_000 - 60_000)
      const actor = Option.getOrThrow(yield* sessions.resolve(opened.id))
      expect(actor).toEqual({ kind: "operator", sessionHash: hashToken(opened.id) })
      yield* sessions.close(actor.sessionHash)
      expect(yield* sessions.resolve(opened.id)).toEqual(Option.none())
    }))

  it.effect("resolves a person's session with their email and name; unknown or malformed ids resolve to nothing", () =>
    Effect.gen(function*() {
      const sessions = yield* Sessions
      const { person } = yield* activePerson
      const opened = yield* sessions.open({ personId: person.id })
      expect(yield* sessions.resolve(opened.id)).toEqual(Option.some({
        kind: "person",
        sessionHash: hashToken(opened.id),
        personId: person.id,
        email: person.email,
        name: "Sam"
      }))
      expect(yield* sessions.resolve("B".repeat(43))).toEqual(Option.none())
      expect(yield* sessions.resolve("not a session")).toEqual(Option.none())
    }))

  it.effect("a removal from the person's last workspace ends every session of theirs; other workspaces cannot end them", () =>
    Effect.gen(function*() {
      const sessions = yield* Sessions
      const members = yield* Members
      const { email, member, owner, person } = yield* activePerson
      const bystander = yield* sessions.open("operator")
      const first = yield* sessions.open({ personId: person.id })
      const second = yield* sessions.open({ personId: person.id })
      // Another workspace invites the person, accepted by them, then removes them again; an invitation never
      // accepted is removed too: none of it ends a session, the person still belongs to `owner`.
      const other = yield* Effect.flatMap(Workspaces, (workspaces) => workspaces.create(uniqueName("Other"), {}))
      const joined = yield* members.invite(other.id, { email, role: "member" })
      yield* members.acceptAs(joined.token, person.id)
      yield* members.remove(other.id, joined.member.id)
      const pending = yield* members.invite(other.id, { email, role: "member" })
      yield* members.remove(other.id, pending.member.id)
      expect(Option.isSome(yield* sessions.resolve(first.id))).toBe(true)
      expect(Option.isSome(yield* sessions.resolve(second.id))).toBe(true)
      // Removed from their last workspace: every session ends.
      yield* members.remove(owner.id, member.id)
      expect(yield* sessions.resolve(first.id)).toEqual(Option.none())
      expect(yield* sessions.resolve(second.id)).toEqual(Option.none())
      expect(Option.isSome(yield* sessions.resolve(bystander.id))).toBe(true)
    }))
}
