import { SqlClient } from "@effect/sql"
import { Context, Data, Duration, Effect, Either, Layer, Option, Ref } from "effect"
import * as crypto from "node:crypto"
import { type MemberRole, normalizeEmail } from "../domain/console"
import { decoyHash, generateToken, hashPassword, hashToken, isWellFormedToken, verifyPassword } from "../domain/password"
import { orStorageFailure } from "./orStorageFailure"
import { isUuid, type WorkspaceNotFound, Workspaces } from "./Workspaces"
import { currentDate, type MembershipRow, PeopleTables, type PeopleState, withoutSessionsOf } from "./peopleTables"
import { type StorageFailure } from "./StorageFailure"

/** How long an invitation link stays valid. */
export const invitationLifetime = Duration.days(7)

export interface Member {
  readonly id: string
  readonly workspaceId: string
  readonly personId: string
  readonly email: string
  readonly name: string | null
  readonly role: MemberRole
  readonly status: "invited" | "active"
  readonly createdAt: Date
}

export interface Person {
  readonly id: string
  readonly email: string
  readonly name: string | null
}

export interface Invitation {
  readonly member: Member
  /** The token of the link: given out once, only its hash is kept. */
  readonly token: string
  readonly expiresAt: Date
}

export interface InvitationInfo {
  readonly email: string
  readonly name: string | null
  readonly role: MemberRole
  readonly workspace: { readonly id: string; readonly name: string }
  readonly expiresAt: Date
  /** The person already has a password (accepting replaces it). */
  readonly hasPassword: boolean
}

export interface Membership {
  readonly id: string
  readonly name: string
  readonly role: MemberRole
}

export class MemberNotFound extends Data.TaggedError("MemberNotFound")<{ readonly id: string }> {}
/** The change would leave the workspace without an active admin. */
export class LastAdmin extends Data.TaggedError("LastAdmin")<{}> {}
/** The invitation does not exist, was used, or expired. */
export class InvitationGone extends Data.TaggedError("InvitationGone")<{ readonly reason: "unknown" | "used" | "expired" }> {}

/**
 * People, their memberships in workspaces and their invitations. A person is one email; a
 * membership becomes active when the person accepts an invitation to it. Accepting sets the
 * person's password, so a fresh invitation is how a password is reset.
 */
export class Members extends Context.Tag("Members")<Members, {
  readonly invite: (
    workspaceId: string,
    input: { readonly email: string; readonly name?: string | undefined; readonly role: MemberRole }
  ) => Effect.Effect<Invitation, WorkspaceNotFound | LastAdmin | StorageFailure>
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<Member>, WorkspaceNotFound | StorageFailure>
  readonly get: (workspaceId: string, memberId: string) => Effect.Effect<Member, MemberNotFound | StorageFailure>
  readonly setRole: (
    workspaceId: string,
    memberId: string,
    role: MemberRole
  ) => Effect.Effect<Member, MemberNotFound | LastAdmin | StorageFailure>
  /** Removes the membership and ends every session of the person at once. */
  readonly remove: (workspaceId: string, memberId: string) => Effect.Effect<Member, MemberNotFound | LastAdmin | StorageFailure>
  readonly invitation: (token: string) => Effect.Effect<InvitationInfo, InvitationGone | StorageFailure>
  /** Sets the password (and name), activates the membership, uses up the link. */
  readonly accept: (
    token: string,
    password: string,
    name: string | undefined
  ) => Effect.Effect<{ readonly person: Person; readonly workspaceId: string }, InvitationGone | StorageFailure>
  /** The person with this email and password, or None; costs the same whether or not the email exists. */
  readonly verify: (email: string, password: string) => Effect.Effect<Option.Option<Person>, StorageFailure>
  readonly personByEmail: (email: string) => Effect.Effect<Option.Option<Person>, StorageFailure>
  /** Active memberships of a person. */
  readonly workspacesOf: (personId: string) => Effect.Effect<ReadonlyArray<Membership>, StorageFailure>
  readonly roleIn: (personId: string, workspaceId: string) => Effect.Effect<Option.Option<MemberRole>, StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    Members,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const workspaces = yield* Workspaces
      type Row = {
        id: string
        workspace_id: string
        person_id: string
        email: string
        name: string | null
        role: MemberRole
        accepted_at: Date | null
        created_at: Date
      }
      const toMember = (row: Row): Member => ({
        id: row.id,
        workspaceId: row.workspace_id,
        personId: row.person_id,
        email: row.email,
        name: row.name,
        role: row.role,
        status: row.accepted_at === null ? "invited" : "active",
        createdAt: row.created_at
      })
      const selectMembers = sql`
        SELECT m.id, m.workspace_id, m.person_id, p.email, p.name, m.role, m.accepted_at, m.created_at
        FROM workspace_members m JOIN people p ON p.id = m.person_id`

      const findMember = (workspaceId: string, memberId: string, lock = false) =>
        isUuid(memberId)
          ? Effect.flatMap(
            sql<Row>`${selectMembers} WHERE m.workspace_id = ${workspaceId} AND m.id = ${memberId}
                     ${lock ? sql`FOR UPDATE OF m` : sql``}`,
            (rows) => (rows[0] ? Effect.succeed(toMember(rows[0])) : Effect.fail(new MemberNotFound({ id: memberId })))
          )
          : Effect.fail(new MemberNotFound({ id: memberId }))

      /**
       * Refuses a change that would leave no active admin. The workspace's admin rows are locked
       * first, so two concurrent demotions cannot each see the other as the remaining admin.
       */
      const guardLastAdmin = (member: Member, nextRole: MemberRole | "removed") =>
        Effect.gen(function*() {
          if (member.role !== "admin" || member.status !== "active" || nextRole === "admin") return
          const others = yield* sql<{ id: string }>`
            SELECT id FROM workspace_members
            WHERE workspace_id = ${member.workspaceId} AND role = 'admin' AND accepted_at IS NOT NULL
            FOR UPDATE`
          if (others.filter((row) => row.id !== member.id).length === 0) return yield* Effect.fail(new LastAdmin())
        })

      const lockWorkspace = (workspaceId: string) => sql`SELECT id FROM workspaces WHERE id = ${workspaceId} FOR UPDATE`

      const invitationRow = (token: string, lock: boolean) =>
        sql<{
          invitation_id: string
          expires_at: Date
          used_at: Date | null
          member_id: string
          workspace_id: string
          workspace_name: string
          person_id: string
          email: string
          name: string | null
          role: MemberRole
          password_hash: string | null
        }>`
          SELECT i.id AS invitation_id, i.expires_at, i.used_at, m.id AS member_id, m.workspace_id,
                 w.name AS workspace_name, p.id AS person_id, p.email, p.name, m.role, p.password_hash
          FROM invitations i JOIN workspace_members m ON m.id = i.member_id
          JOIN people p ON p.id = m.person_id JOIN workspaces w ON w.id = m.workspace_id
          WHERE i.token_hash = ${hashToken(token)} ${lock ? sql`FOR UPDATE OF i` : sql``}`

      const liveInvitation = (token: string, lock: boolean) =>
        Effect.gen(function*() {
          if (!isWellFormedToken(token)) return yield* Effect.fail(new InvitationGone({ reason: "unknown" }))
          const row = (yield* invitationRow(token, lock))[0]
          if (!row) return yield* Effect.fail(new InvitationGone({ reason: "unknown" }))
          if (row.used_at !== null) return yield* Effect.fail(new InvitationGone({ reason: "used" }))
          const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
          if (row.expires_at.getTime() <= now) return yield* Effect.fail(new InvitationGone({ reason: "expired" }))
          return row
        })

      const personByEmail = (email: string) =>
        sql<{ id: string; email: string; name: string | null; password_hash: string | null }>`
          SELECT id, email, name, password_hash FROM people WHERE email = ${normalizeEmail(email)}`.pipe(
          Effect.map((rows) => Option.fromNullable(rows[0]))
        )

      return {
        invite: (workspaceId, input) =>
          orStorageFailure(sql.withTransaction(Effect.gen(function*() {
            yield* workspaces.get(workspaceId)
            yield* lockWorkspace(workspaceId)
            const email = normalizeEmail(input.email)
            const [person] = yield* sql<{ id: string }>`
              INSERT INTO people (email, name) VALUES (${email}, ${input.name ?? null})
              ON CONFLICT (email) DO UPDATE SET
                name = coalesce(EXCLUDED.name, people.name), updated_at = now()
              RETURNING id`
            const existing = yield* sql<{ id: string }>`
              SELECT id FROM workspace_members WHERE workspace_id = ${workspaceId} AND person_id = ${person!.id}`
            let memberId: string
            if (existing[0]) {
              memberId = existing[0].id
              const member = yield* findMember(workspaceId, memberId, true)
              yield* guardLastAdmin(member, input.role)
              yield* sql`UPDATE workspace_members SET role = ${input.role} WHERE id = ${memberId}`
              // Outstanding links of this membership stop working: only the newest one counts.
              yield* sql`UPDATE invitations SET used_at = now() WHERE member_id = ${memberId} AND used_at IS NULL`
            } else {
              const [created] = yield* sql<{ id: string }>`
                INSERT INTO workspace_members (workspace_id, person_id, role)
                VALUES (${workspaceId}, ${person!.id}, ${input.role}) RETURNING id`
              memberId = created!.id
            }
            const token = generateToken()
            const expiresAt = new Date((yield* Effect.clockWith((c) => c.currentTimeMillis)) + Duration.toMillis(invitationLifetime))
            yield* sql`INSERT INTO invitations (token_hash, member_id, expires_at)
                       VALUES (${hashToken(token)}, ${memberId}, ${expiresAt})`
            const member = yield* findMember(workspaceId, memberId)
            return { member, token, expiresAt }
          }))).pipe(Effect.catchTag("MemberNotFound", (e) => Effect.die(e))),
        list: (workspaceId) =>
          Effect.zipRight(
            workspaces.get(workspaceId),
            orStorageFailure(sql<Row>`${selectMembers} WHERE m.workspace_id = ${workspaceId} ORDER BY p.email`).pipe(
              Effect.map((rows) => rows.map(toMember))
            )
          ),
        get: (workspaceId, memberId) => orStorageFailure(findMember(workspaceId, memberId)),
        setRole: (workspaceId, memberId, role) =>
          orStorageFailure(sql.withTransaction(Effect.gen(function*() {
            yield* lockWorkspace(workspaceId)
            const member = yield* findMember(workspaceId, memberId, true)
            yield* guardLastAdmin(member, role)
            yield* sql`UPDATE workspace_members SET role = ${role} WHERE id = ${memberId}`
            return { ...member, role }
          }))),
        remove: (workspaceId, memberId) =>
          orStorageFailure(sql.withTransaction(Effect.gen(function*() {
            yield* lockWorkspace(workspaceId)
            const member = yield* findMember(workspaceId, memberId, true)
            yield* guardLastAdmin(member, "removed")
            yield* sql`DELETE FROM workspace_members WHERE id = ${memberId}`
            yield* sql`DELETE FROM console_sessions WHERE person_id = ${member.personId}`
            return member
          }))),
        invitation: (token) =>
          orStorageFailure(liveInvitation(token, false)).pipe(Effect.map((row) => ({
            email: row.email,
            name: row.name,
            role: row.role,
            workspace: { id: row.workspace_id, name: row.workspace_name },
            expiresAt: row.expires_at,
            hasPassword: row.password_hash !== null
          }))),
        accept: (token, password, name) =>
          Effect.gen(function*() {
            // Hashed before the transaction: no row lock is held while scrypt runs.
            const hash = yield* hashPassword(password)
            return yield* orStorageFailure(sql.withTransaction(Effect.gen(function*() {
              const row = yield* liveInvitation(token, true)
              yield* sql`UPDATE invitations SET used_at = now() WHERE id = ${row.invitation_id}`
              yield* sql`UPDATE workspace_members SET accepted_at = coalesce(accepted_at, now()) WHERE id = ${row.member_id}`
              const [person] = yield* sql<{ id: string; email: string; name: string | null }>`
                UPDATE people SET password_hash = ${hash}, name = coalesce(${name ?? null}, name), updated_at = now()
                WHERE id = ${row.person_id} RETURNING id, email, name`
              // A new password ends the sessions opened with the old one.
              yield* sql`DELETE FROM console_sessions WHERE person_id = ${row.person_id}`
              return { person: person!, workspaceId: row.workspace_id }
            })))
          }),
        verify: (email, password) =>
          Effect.gen(function*() {
            const found = yield* orStorageFailure(personByEmail(email))
            const stored = Option.flatMap(found, (p) => Option.fromNullable(p.password_hash))
            // Without a person (or a password) a decoy is checked, so timing does not tell which emails exist.
            const matches = yield* verifyPassword(password, Option.getOrElse(stored, () => decoyHash))
            return matches && Option.isSome(stored)
              ? Option.map(found, ({ email, id, name }) => ({ id, email, name }))
              : Option.none()
          }),
        personByEmail: (email) =>
          orStorageFailure(personByEmail(email)).pipe(Effect.map(Option.map(({ email, id, name }) => ({ id, email, name })))),
        workspacesOf: (personId) =>
          orStorageFailure(sql<{ id: string; name: string; role: MemberRole }>`
            SELECT w.id, w.name, m.role FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
            WHERE m.person_id = ${personId} AND m.accepted_at IS NOT NULL ORDER BY w.name, w.id`),
        roleIn: (personId, workspaceId) =>
          isUuid(workspaceId)
            ? orStorageFailure(sql<{ role: MemberRole }>`
                SELECT role FROM workspace_members
                WHERE person_id = ${personId} AND workspace_id = ${workspaceId} AND accepted_at IS NOT NULL`).pipe(
              Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.role))
            )
            : Effect.succeed(Option.none())
      }
    })
  )

  /**
   * For tests and the in-memory app: the same behaviour over `PeopleTables` (shared with `Sessions.memory`).
   * Each change is one `Ref.modify`, as each is one transaction in PostgreSQL.
   */
  static readonly memory = Layer.effect(
    Members,
    Effect.gen(function*() {
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
          name: person.name,
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
              const known = [...state.people.values()].find((person) => person.email === email)
              const person = known === undefined
                ? { id: crypto.randomUUID(), email, name: input.name ?? null, passwordHash: null }
                : { ...known, name: input.name ?? known.name }
              const existing = [...state.memberships.values()].find((row) => row.workspaceId === workspaceId && row.personId === person.id)
              if (existing !== undefined && leavesNoAdmin(state, existing, input.role)) return [Either.left(new LastAdmin()), state]
              const membership: MembershipRow = existing === undefined
                ? { id: crypto.randomUUID(), workspaceId, personId: person.id, role: input.role, acceptedAt: null, createdAt: now }
                : { ...existing, role: input.role }
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
            return [Either.right(toMember(state, row)), withoutSessionsOf({ ...state, memberships, invitations }, row.personId)]
          })),
        invitation: (token) =>
          Effect.gen(function*() {
            const now = yield* currentDate
            const state = yield* Ref.get(tables)
            const { invitation, membership, person } = yield* liveInvitation(state, token, now)
            const workspace = yield* Effect.orDie(workspaces.get(membership.workspaceId))
            return {
              email: person.email,
              name: person.name,
              role: membership.role,
              workspace: { id: workspace.id, name: workspace.name },
              expiresAt: invitation.expiresAt,
              hasPassword: person.passwordHash !== null
            }
          }),
        accept: (token, password, name) =>
          Effect.gen(function*() {
            const hash = yield* hashPassword(password)
            const now = yield* currentDate
            const outcome = yield* Ref.modify(
              tables,
              (state): [Either.Either<{ readonly person: Person; readonly workspaceId: string }, InvitationGone>, PeopleState] => {
                const live = liveInvitation(state, token, now)
                if (Either.isLeft(live)) return [Either.left(live.left), state]
                const { invitation, membership, person } = live.right
                const updated = { ...person, passwordHash: hash, name: name ?? person.name }
                const next = withoutSessionsOf({
                  ...state,
                  people: new Map(state.people).set(person.id, updated),
                  memberships: new Map(state.memberships).set(membership.id, { ...membership, acceptedAt: membership.acceptedAt ?? now }),
                  invitations: new Map(state.invitations).set(invitation.id, { ...invitation, usedAt: now })
                }, person.id)
                return [
                  Either.right({ person: { id: updated.id, email: updated.email, name: updated.name }, workspaceId: membership.workspaceId }),
                  next
                ]
              }
            )
            return yield* outcome
          }),
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
  ).pipe(Layer.provide(PeopleTables.memory))
}
