import { Duration, Effect, Either, Option, Ref } from "effect"
import * as crypto from "node:crypto"
import { type MemberRole, normalizeEmail } from "../../../domain/console"
import { decoyHash, generateToken, hashPassword, hashToken, isWellFormedToken, verifyPassword } from "../../../domain/password"
import { currentDate, type InvitationRow, type MembershipRow, PeopleTables, type PeopleState, withoutSessionsOf } from "../peopleTables"
import { Workspaces } from "../../workspaces/Workspaces"
import {
  type Accepted,
  AccountExists,
  InvitationGone,
  invitationLifetime,
  LastAdmin,
  type Member,
  type Membership,
  MemberNotFound,
  type MembersShape,
  NotInvitee
} from "./contract"

/**
 * Members kept in memory, over `PeopleTables` (shared with `Sessions.memory`). Each change is one
 * `Ref.modify`, as each is one transaction in PostgreSQL.
 */
export const makeMemoryMembers: Effect.Effect<MembersShape, never, PeopleTables | Workspaces> = Effect.gen(function*() {
  const tables = yield* PeopleTables
  const workspaces = yield* Workspaces
  const tokenKey = (token: string) => hashToken(token).toString("hex")

  const toMember = (state: PeopleState, row: MembershipRow): Member => {
    const person = state.people.get(row.personId)!
    return {
      id: row.id,
      workspaceId: row.workspaceId,
      personId: row.personId,
      email: person.email,
      name: row.acceptedAt === null ? row.invitedName : person.name,
      role: row.role,
      status: row.acceptedAt === null ? "invited" : "active",
      createdAt: row.createdAt
    }
  }
  const findMember = (state: PeopleState, workspaceId: string, memberId: string) =>
    Option.filter(Option.fromNullable(state.memberships.get(memberId)), (row) => row.workspaceId === workspaceId)
  /** Whether the change leaves the workspace without an active admin. */
  const leavesNoAdmin = (state: PeopleState, row: MembershipRow, nextRole: MemberRole | "removed") =>
    row.role === "admin" && row.acceptedAt !== null && nextRole !== "admin" &&
    ![...state.memberships.values()].some((other) =>
      other.id !== row.id && other.workspaceId === row.workspaceId && other.role === "admin" && other.acceptedAt !== null
    )

  /** The usable invitation of a token, or why there is none. */
  const liveInvitation = (state: PeopleState, token: string, now: Date) => {
    if (!isWellFormedToken(token)) return Either.left(new InvitationGone({ reason: "unknown" }))
    const invitation = [...state.invitations.values()].find((row) => row.tokenHash === tokenKey(token))
    if (invitation === undefined) return Either.left(new InvitationGone({ reason: "unknown" }))
    if (invitation.usedAt !== null) return Either.left(new InvitationGone({ reason: "used" }))
    if (invitation.expiresAt.getTime() <= now.getTime()) return Either.left(new InvitationGone({ reason: "expired" }))
    const membership = state.memberships.get(invitation.memberId)!
    return Either.right({ invitation, membership, person: state.people.get(membership.personId)! })
  }

  /** The membership active and the link used up. */
  const activated = (state: PeopleState, invitation: InvitationRow, membership: MembershipRow, now: Date): PeopleState => ({
    ...state,
    memberships: new Map(state.memberships).set(membership.id, { ...membership, acceptedAt: membership.acceptedAt ?? now }),
    invitations: new Map(state.invitations).set(invitation.id, { ...invitation, usedAt: now })
  })

  const personByEmail = (email: string) =>
    Effect.map(Ref.get(tables), (state) =>
      Option.fromNullable([...state.people.values()].find((person) => person.email === normalizeEmail(email))))

  return {
    invite: (workspaceId, input) =>
      Effect.gen(function*() {
        yield* workspaces.get(workspaceId)
        const now = yield* currentDate
        const token = generateToken()
        const expiresAt = new Date(now.getTime() + Duration.toMillis(invitationLifetime))
        const email = normalizeEmail(input.email)
        const outcome = yield* Ref.modify(tables, (state): [Either.Either<Member, LastAdmin>, PeopleState] => {
          // A known person is left exactly as they are: the inviter's name goes on the membership only.
          const person = [...state.people.values()].find((person) => person.email === email) ??
            { id: crypto.randomUUID(), email, name: null, passwordHash: null }
          const existing = [...state.memberships.values()].find((row) => row.workspaceId === workspaceId && row.personId === person.id)
          if (existing !== undefined && leavesNoAdmin(state, existing, input.role)) return [Either.left(new LastAdmin()), state]
          const membership: MembershipRow = existing === undefined
            ? {
              id: crypto.randomUUID(),
              workspaceId,
              personId: person.id,
              role: input.role,
              invitedName: input.name ?? null,
              acceptedAt: null,
              createdAt: now
            }
            : { ...existing, role: input.role, invitedName: input.name ?? existing.invitedName }
          // Outstanding links of this membership stop working: only the newest one counts.
          const invitations = new Map([...state.invitations].map(([id, row]) =>
            [id, row.memberId === membership.id && row.usedAt === null ? { ...row, usedAt: now } : row] as const
          ))
          const invitationId = crypto.randomUUID()
          invitations.set(invitationId, { id: invitationId, tokenHash: tokenKey(token), memberId: membership.id, expiresAt, usedAt: null })
          const next: PeopleState = {
            ...state,
            people: new Map(state.people).set(person.id, person),
            memberships: new Map(state.memberships).set(membership.id, membership),
            invitations
          }
          return [Either.right(toMember(next, membership)), next]
        })
        const member = yield* outcome
        return { member, token, expiresAt }
      }),
    list: (workspaceId) =>
      Effect.zipRight(
        workspaces.get(workspaceId),
        Effect.map(Ref.get(tables), (state) =>
          [...state.memberships.values()]
            .filter((row) => row.workspaceId === workspaceId)
            .map((row) => toMember(state, row))
            .sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0)))
      ),
    get: (workspaceId, memberId) =>
      Effect.flatMap(Ref.get(tables), (state) =>
        Option.match(findMember(state, workspaceId, memberId), {
          onNone: () => Effect.fail(new MemberNotFound({ id: memberId })),
          onSome: (row) => Effect.succeed(toMember(state, row))
        })),
    setRole: (workspaceId, memberId, role) =>
      Effect.flatten(Ref.modify(tables, (state): [Either.Either<Member, MemberNotFound | LastAdmin>, PeopleState] => {
        const row = Option.getOrUndefined(findMember(state, workspaceId, memberId))
        if (row === undefined) return [Either.left(new MemberNotFound({ id: memberId })), state]
        if (leavesNoAdmin(state, row, role)) return [Either.left(new LastAdmin()), state]
        const next = { ...state, memberships: new Map(state.memberships).set(memberId, { ...row, role }) }
        return [Either.right(toMember(next, { ...row, role })), next]
      })),
    remove: (workspaceId, memberId) =>
      Effect.flatten(Ref.modify(tables, (state): [Either.Either<Member, MemberNotFound | LastAdmin>, PeopleState] => {
        const row = Option.getOrUndefined(findMember(state, workspaceId, memberId))
        if (row === undefined) return [Either.left(new MemberNotFound({ id: memberId })), state]
        if (leavesNoAdmin(state, row, "removed")) return [Either.left(new LastAdmin()), state]
        const memberships = new Map(state.memberships)
        memberships.delete(memberId)
        // Its invitations go with it (ON DELETE CASCADE).
        const invitations = new Map([...state.invitations].filter(([, invitation]) => invitation.memberId !== memberId))
        const next = { ...state, memberships, invitations }
        const stillActive = [...memberships.values()].some((other) => other.personId === row.personId && other.acceptedAt !== null)
        return [Either.right(toMember(state, row)), stillActive ? next : withoutSessionsOf(next, row.personId)]
      })),
    invitation: (token) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        const state = yield* Ref.get(tables)
        const { invitation, membership, person } = yield* liveInvitation(state, token, now)
        const workspace = yield* Effect.orDie(workspaces.get(membership.workspaceId))
        return {
          email: person.email,
          name: membership.invitedName,
          role: membership.role,
          workspace: { id: workspace.id, name: workspace.name },
          expiresAt: invitation.expiresAt
        }
      }),
    acceptWithNewAccount: (token, password, name) =>
      Effect.gen(function*() {
        const hash = yield* hashPassword(password)
        const now = yield* currentDate
        return yield* Effect.flatten(Ref.modify(tables, (state): [Either.Either<Accepted, InvitationGone | AccountExists>, PeopleState] => {
          const live = liveInvitation(state, token, now)
          if (Either.isLeft(live)) return [Either.left(live.left), state]
          const { invitation, membership, person } = live.right
          if (person.passwordHash !== null) return [Either.left(new AccountExists()), state]
          const created = { ...person, passwordHash: hash, name: name ?? membership.invitedName }
          return [
            Either.right({ person: { id: created.id, email: created.email, name: created.name }, workspaceId: membership.workspaceId }),
            activated({ ...state, people: new Map(state.people).set(person.id, created) }, invitation, membership, now)
          ]
        }))
      }),
    acceptAs: (token, personId) =>
      Effect.flatMap(currentDate, (now) =>
        Effect.flatten(Ref.modify(tables, (state): [Either.Either<Accepted, InvitationGone | NotInvitee>, PeopleState] => {
          const live = liveInvitation(state, token, now)
          if (Either.isLeft(live)) return [Either.left(live.left), state]
          const { invitation, membership, person } = live.right
          if (person.id !== personId || person.passwordHash === null) return [Either.left(new NotInvitee()), state]
          return [
            Either.right({ person: { id: person.id, email: person.email, name: person.name }, workspaceId: membership.workspaceId }),
            activated(state, invitation, membership, now)
          ]
        }))),
    verify: (email, password) =>
      Effect.gen(function*() {
        const found = yield* personByEmail(email)
        const stored = Option.flatMap(found, (p) => Option.fromNullable(p.passwordHash))
        const matches = yield* verifyPassword(password, Option.getOrElse(stored, () => decoyHash))
        return matches && Option.isSome(stored)
          ? Option.map(found, ({ email, id, name }) => ({ id, email, name }))
          : Option.none()
      }),
    personByEmail: (email) => Effect.map(personByEmail(email), Option.map(({ email, id, name }) => ({ id, email, name }))),
    workspacesOf: (personId) =>
      Effect.gen(function*() {
        const state = yield* Ref.get(tables)
        const active = [...state.memberships.values()].filter((row) => row.personId === personId && row.acceptedAt !== null)
        const memberships = yield* Effect.forEach(active, (row) =>
          Effect.map(Effect.orDie(workspaces.get(row.workspaceId)), (workspace): Membership => ({
            id: workspace.id,
            name: workspace.name,
            role: row.role
          })))
        return memberships.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      }),
    roleIn: (personId, workspaceId) =>
      Effect.map(Ref.get(tables), (state) =>
        Option.map(
          Option.fromNullable([...state.memberships.values()].find((row) =>
            row.personId === personId && row.workspaceId === workspaceId && row.acceptedAt !== null
          )),
          (row) => row.role
        ))
  }
})
