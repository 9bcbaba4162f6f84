import { expect, type Vitest } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import * as crypto from "node:crypto"
import { invitationLifetime, Members } from "../../src/services/people/Members"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { uniqueName } from "./workspaces"

const password = "correct horse battery staple"

/** An email no other case uses, with capitals and spaces the store must normalize. */
export const uniqueEmail = (who: string) => ` ${who}.${crypto.randomBytes(4).toString("hex")}@Example.COM `
const normalized = (email: string) => email.trim().toLowerCase()
const goneReason = (error: { readonly _tag: string; readonly reason?: string }) => error.reason ?? error._tag

/** The behaviour both backings of Members must show. */
export const membersContract = (it: Vitest.MethodsNonLive<Members | Workspaces, true>) => {
  const workspace = Effect.flatMap(Workspaces, (workspaces) => workspaces.create(uniqueName("People"), {}))
  /** A workspace with one active admin, and that admin. */
  const withAdmin = Effect.gen(function*() {
    const members = yield* Members
    const owner = yield* workspace
    const email = uniqueEmail("admin")
    const invitation = yield* members.invite(owner.id, { email, name: "Ada", role: "admin" })
    const accepted = yield* members.acceptWithNewAccount(invitation.token, password, undefined)
    return { owner, admin: invitation.member, person: accepted.person, email }
  })

  it.effect("invites a person: an invited member, a link valid for a week, the person's details", () =>
    Effect.gen(function*() {
      const members = yield* Members
      const owner = yield* workspace
      const email = uniqueEmail("bo")
      const before = Date.now()
      const invitation = yield* members.invite(owner.id, { email, name: "Bo", role: "member" })
      expect(invitation.member).toMatchObject({ workspaceId: owner.id, email: normalized(email), name: "Bo", role: "member", status: "invited" })
      expect(invitation.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const lifetime = invitation.expiresAt.getTime() - before
      expect(lifetime).toBeGreaterThanOrEqual(Duration.toMillis(invitationLifetime) - 1000)
      expect(lifetime).toBeLessThanOrEqual(Duration.toMillis(invitationLifetime) + 60_000)
      expect(yield* members.invitation(invitation.token)).toEqual({
        email: normalized(email),
        name: "Bo",
        role: "member",
        workspace: { id: owner.id, name: owner.name },
        expiresAt: invitation.expiresAt
      })
      expect(yield* members.get(owner.id, invitation.member.id)).toEqual(invitation.member)
      expect((yield* Effect.flip(members.invite(crypto.randomUUID(), { email, role: "member" })))._tag).toBe("WorkspaceNotFound")
    }))

  it.effect("lists a workspace's members by email", () =>
    Effect.gen(function*() {
      const members = yield* Members
      const owner = yield* workspace
      const tag = crypto.randomBytes(4).toString("hex")
      for (const who of ["carol", "alice", "bob"]) yield* members.invite(owner.id, { email: `${who}.${tag}@example.com`, role: "member" })
      expect((yield* members.list(owner.id)).map((m) => m.email.split(".")[0])).toEqual(["alice", "bob", "carol"])
      expect((yield* Effect.flip(members.list(crypto.randomUUID())))._tag).toBe("WorkspaceNotFound")
    }))

  it.effect("accepting sets the password, activates the membership and uses up the link", () =>
    Effect.gen(function*() {
      const members = yield* Members
      const { admin, email, owner, person } = yield* withAdmin
      expect(person).toEqual({ id: admin.personId, email: normalized(email), name: "Ada" })
      expect((yield* members.get(owner.id, admin.id)).status).toBe("active")
      expect(yield* members.verify(email, password)).toEqual(Option.some(person))
      expect(yield* members.verify(email, `${password}!`)).toEqual(Option.none())
      expect(yield* members.verify(uniqueEmail("nobody"), password)).toEqual(Option.none())
      expect(yield* members.personByEmail(email)).toEqual(Option.some(person))
      expect(yield* members.roleIn(person.id, owner.id)).toEqual(Option.some("admin"))
      expect(yield* members.roleIn(person.id, "not-a-uuid")).toEqual(Option.none())
      expect(yield* members.workspacesOf(person.id)).toEqual([{ id: owner.id, name: owner.name, role: "admin" }])
    }))

  it.effect("a link works once; a new invitation replaces the outstanding one and keeps the suggested name", () =>
    Effect.gen(function*() {
      const members = yield* Members
      const owner = yield* workspace
      const email = uniqueEmail("dee")
      const first = yield* members.invite(owner.id, { email, name: "Dee", role: "member" })
      const second = yield* members.invite(owner.id, { email, role: "admin" })
      expect(second.member).toMatchObject({ id: first.member.id, name: "Dee", role: "admin", status: "invited" })
      expect(goneReason(yield* Effect.flip(members.invitation(first.token)))).toBe("used")
      expect((yield* members.acceptWithNewAccount(second.token, password, "Dee Dee")).person.name).toBe("Dee Dee")
      expect(goneReason(yield* Effect.flip(members.acceptWithNewAccount(second.token, password, undefined)))).toBe("used")
      expect(goneReason(yield* Effect.flip(members.invitation("A".repeat(43))))).toBe("unknown")
      expect(goneReason(yield* Effect.flip(members.invitation("short")))).toBe("unknown")
      // Invited again after accepting: still active, under the person's own name.
      const third = yield* members.invite(owner.id, { email, name: "Someone Else", role: "admin" })
      expect(third.member).toMatchObject({ status: "active", name: "Dee Dee" })
      expect(yield* members.invitation(third.token)).not.toHaveProperty("hasPassword")
    }))

  it.effect("an invitation never touches an existing account: no password, no name, nothing revealed", () =>
    Effect.gen(function*() {
      const members = yield* Members
      const { email, owner, person } = yield* withAdmin
      const other = yield* workspace
      // Another workspace invites the same email, with a name of its choosing.
      const invitation = yield* members.invite(other.id, { email, name: "Mallory's Puppet", role: "admin" })
      expect(invitation.member).toMatchObject({ personId: person.id, name: "Mallory's Puppet", status: "invited" })
      // What the link shows is what the inviter typed: not the person's name, not whether they have an account.
      const shown = yield* members.invitation(invitation.token)
      expect(shown).toEqual({
        email: normalized(email),
        name: "Mallory's Puppet",
        role: "admin",
        workspace: { id: other.id, name: other.name },
        expiresAt: invitation.expiresAt
      })
      // The link cannot set the password; nothing changes and it stays usable.
      expect((yield* Effect.flip(members.acceptWithNewAccount(invitation.token, "attacker's own password", "Renamed")))._tag).toBe("AccountExists")
      expect(yield* members.verify(email, password)).toEqual(Option.some(person))
      expect(yield* members.verify(email, "attacker's own password")).toEqual(Option.none())
      expect(yield* members.personByEmail(email)).toEqual(Option.some({ ...person, name: "Ada" }))
      expect(yield* members.roleIn(person.id, other.id)).toEqual(Option.none())
      expect(yield* members.workspacesOf(person.id)).toEqual([{ id: owner.id, name: owner.name, role: "admin" }])
      // Nobody else can accept it in the person's place.
      const stranger = yield* withAdmin
      expect((yield* Effect.flip(members.acceptAs(invitation.token, stranger.person.id)))._tag).toBe("NotInvitee")
      // The person themselves can: the membership counts, the account is as it was.
      const accepted = yield* members.acceptAs(invitation.token, person.id)
      expect(accepted).toEqual({ person, workspaceId: other.id })
      expect((yield* members.get(other.id, invitation.member.id))).toMatchObject({ status: "active", name: "Ada" })
      expect(yield* members.verify(email, password)).toEqual(Option.some(person))
      expect(goneReason(yield* Effect.flip(members.acceptAs(invitation.token, person.id)))).toBe("used")
    }))

  it.effect("a new email's account is created once: a second link of another workspace cannot set it again", () =>
    Effect.gen(function*() {
      const members = yield* Members
      const email = uniqueEmail("new")
      const [one, two] = [yield* workspace, yield* workspace]
      const first = yield* members.invite(one.id, { email, name: "From One", role: "member" })
      const second = yield* members.invite(two.id, { email, name: "From Two", role: "member" })
      // Nobody has an account yet: acceptAs is for existing accounts only.
      expect((yield* Effect.flip(members.acceptAs(first.token, first.member.personId)))._tag).toBe("NotInvitee")
      // Both at once: exactly one creates the account.
      const outcomes = yield* Effect.all(
        [members.acceptWithNewAccount(first.token, password, undefined), members.acceptWithNewAccount(second.token, `${password} 2`, undefined)].map(
          Effect.either
        ),
        { concurrency: 2 }
      )
      expect(outcomes.filter((outcome) => outcome._tag === "Right")).toHaveLength(1)
      expect(outcomes.filter((outcome) => outcome._tag === "Left").map((outcome) => outcome._tag === "Left" && outcome.left._tag)).toEqual(["AccountExists"])
      // Its name is the suggestion of the link that created it; the other workspace's never applies.
      const created = outcomes.find((outcome) => outcome._tag === "Right")!
      expect(created._tag === "Right" && created.right.person.name).toBe(created._tag === "Right" && created.right.workspaceId === one.id ? "From One" : "From Two")
    }))

  it.effect("never leaves a workspace without an active admin", () =>
    Effect.gen(function*() {
      const members = yield* Members
      const { admin, owner } = yield* withAdmin
      expect((yield* Effect.flip(members.setRole(owner.id, admin.id, "member")))._tag).toBe("LastAdmin")
      expect((yield* Effect.flip(members.remove(owner.id, admin.id)))._tag).toBe("LastAdmin")
      expect((yield* Effect.flip(members.invite(owner.id, { email: admin.email, role: "member" })))._tag).toBe("LastAdmin")
      // An invited admin does not count: they have not accepted.
      const invited = yield* members.invite(owner.id, { email: uniqueEmail("eve"), role: "admin" })
      expect((yield* Effect.flip(members.setRole(owner.id, admin.id, "member")))._tag).toBe("LastAdmin")
      yield* members.acceptWithNewAccount(invited.token, password, undefined)
      expect((yield* members.setRole(owner.id, admin.id, "member")).role).toBe("member")
      expect((yield* members.remove(owner.id, admin.id)).id).toBe(admin.id)
      expect((yield* members.list(owner.id)).map((m) => m.id)).toEqual([invited.member.id])
      expect(yield* members.roleIn(admin.personId, owner.id)).toEqual(Option.none())
    }))

  it.effect("answers MemberNotFound for another workspace's member and for ids that cannot exist", () =>
    Effect.gen(function*() {
      const members = yield* Members
      const { admin } = yield* withAdmin
      const other = yield* workspace
      for (const id of [admin.id, crypto.randomUUID(), "not-a-uuid"]) {
        expect((yield* Effect.flip(members.get(other.id, id)))._tag).toBe("MemberNotFound")
        expect((yield* Effect.flip(members.setRole(other.id, id, "admin")))._tag).toBe("MemberNotFound")
        expect((yield* Effect.flip(members.remove(other.id, id)))._tag).toBe("MemberNotFound")
      }
    }))
}
