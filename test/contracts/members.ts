import { expect, type Vitest } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import * as crypto from "node:crypto"
import { invitationLifetime, Members } from "../../src/services/Members"
import { Workspaces } from "../../src/services/Workspaces"
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
    const accepted = yield* members.accept(invitation.token, password, undefined)
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
        expiresAt: invitation.expiresAt,
        hasPassword: false
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

  it.effect("a link works once; a new invitation replaces the outstanding one and keeps a known name", () =>
    Effect.gen(function*() {
      const members = yield* Members
      const owner = yield* workspace
      const email = uniqueEmail("dee")
      const first = yield* members.invite(owner.id, { email, name: "Dee", role: "member" })
      const second = yield* members.invite(owner.id, { email, role: "admin" })
      expect(second.member).toMatchObject({ id: first.member.id, name: "Dee", role: "admin", status: "invited" })
      expect(goneReason(yield* Effect.flip(members.invitation(first.token)))).toBe("used")
      yield* members.accept(second.token, password, "Dee Dee")
      expect(goneReason(yield* Effect.flip(members.accept(second.token, password, undefined)))).toBe("used")
      expect(goneReason(yield* Effect.flip(members.invitation("A".repeat(43))))).toBe("unknown")
      expect(goneReason(yield* Effect.flip(members.invitation("short")))).toBe("unknown")
      // Invited again after accepting: still active, and the person already has a password.
      const third = yield* members.invite(owner.id, { email, role: "admin" })
      expect(third.member).toMatchObject({ status: "active", name: "Dee Dee" })
      expect((yield* members.invitation(third.token)).hasPassword).toBe(true)
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
      yield* members.accept(invited.token, password, undefined)
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
