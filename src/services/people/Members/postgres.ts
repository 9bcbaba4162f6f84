import { SqlClient } from "@effect/sql"
import { Duration, Effect, Option } from "effect"
import { type MemberRole, normalizeEmail } from "../../../domain/console"
import { decoyHash, generateToken, hashPassword, hashToken, isWellFormedToken, verifyPassword } from "../../../domain/password"
import { orStorageFailure } from "../../../platform/orStorageFailure"
import { isUuid, Workspaces } from "../../workspaces/Workspaces"
import {
  type Accepted,
  AccountExists,
  InvitationGone,
  invitationLifetime,
  LastAdmin,
  type Member,
  MemberNotFound,
  type MembersShape,
  NotInvitee
} from "./contract"

/** Members over PostgreSQL: each change one transaction, the workspace's rows locked against a concurrent one. */
export const makePostgresMembers: Effect.Effect<MembersShape, never, SqlClient.SqlClient | Workspaces> = Effect.gen(function*() {
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
  // While invited, the name is the inviter's suggestion, never the person's own (which tells of an account).
  const selectMembers = sql`
    SELECT m.id, m.workspace_id, m.person_id, p.email,
           CASE WHEN m.accepted_at IS NULL THEN m.invited_name ELSE p.name END AS name,
           m.role, m.accepted_at, m.created_at
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
      invited_name: string | null
      role: MemberRole
    }>`
      SELECT i.id AS invitation_id, i.expires_at, i.used_at, m.id AS member_id, m.workspace_id,
             w.name AS workspace_name, p.id AS person_id, p.email, m.invited_name, m.role
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

  /** The membership active and the link used up (inside the caller's transaction, the invitation row locked). */
  const activate = (row: { readonly invitation_id: string; readonly member_id: string }) =>
    Effect.zipRight(
      sql`UPDATE invitations SET used_at = now() WHERE id = ${row.invitation_id}`,
      sql`UPDATE workspace_members SET accepted_at = coalesce(accepted_at, now()) WHERE id = ${row.member_id}`
    )

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
        // A known person is left exactly as they are (the no-op update only returns their id): the
        // inviter's name goes on the membership.
        const [person] = yield* sql<{ id: string }>`
          INSERT INTO people (email) VALUES (${email})
          ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email
          RETURNING id`
        const existing = yield* sql<{ id: string }>`
          SELECT id FROM workspace_members WHERE workspace_id = ${workspaceId} AND person_id = ${person!.id}`
        let memberId: string
        if (existing[0]) {
          memberId = existing[0].id
          const member = yield* findMember(workspaceId, memberId, true)
          yield* guardLastAdmin(member, input.role)
          yield* sql`UPDATE workspace_members SET role = ${input.role}, invited_name = coalesce(${input.name ?? null}, invited_name)
                     WHERE id = ${memberId}`
          // Outstanding links of this membership stop working: only the newest one counts.
          yield* sql`UPDATE invitations SET used_at = now() WHERE member_id = ${memberId} AND used_at IS NULL`
        } else {
          const [created] = yield* sql<{ id: string }>`
            INSERT INTO workspace_members (workspace_id, person_id, role, invited_name)
            VALUES (${workspaceId}, ${person!.id}, ${input.role}, ${input.name ?? null}) RETURNING id`
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
        // Sessions end with the person's last active membership only: no workspace signs a person out of the others.
        yield* sql`DELETE FROM console_sessions WHERE person_id = ${member.personId} AND NOT EXISTS (
                     SELECT 1 FROM workspace_members WHERE person_id = ${member.personId} AND accepted_at IS NOT NULL)`
        return member
      }))),
    invitation: (token) =>
      orStorageFailure(liveInvitation(token, false)).pipe(Effect.map((row) => ({
        email: row.email,
        name: row.invited_name,
        role: row.role,
        workspace: { id: row.workspace_id, name: row.workspace_name },
        expiresAt: row.expires_at
      }))),
    acceptWithNewAccount: (token, password, name) =>
      Effect.gen(function*() {
        // Hashed before the transaction: no row lock is held while scrypt runs.
        const hash = yield* hashPassword(password)
        return yield* orStorageFailure(sql.withTransaction(Effect.gen(function*() {
          const row = yield* liveInvitation(token, true)
          // Only a person without a password gets one: the condition and the write are one statement, so two
          // links of one new email (two workspaces) cannot both set it.
          const [person] = yield* sql<{ id: string; email: string; name: string | null }>`
            UPDATE people SET password_hash = ${hash}, name = ${name ?? row.invited_name}, updated_at = now()
            WHERE id = ${row.person_id} AND password_hash IS NULL RETURNING id, email, name`
          if (person === undefined) return yield* Effect.fail(new AccountExists())
          yield* activate(row)
          return { person, workspaceId: row.workspace_id } satisfies Accepted
        })))
      }),
    acceptAs: (token, personId) =>
      orStorageFailure(sql.withTransaction(Effect.gen(function*() {
        const row = yield* liveInvitation(token, true)
        const [person] = yield* sql<{ id: string; email: string; name: string | null }>`
          SELECT id, email, name FROM people WHERE id = ${row.person_id} AND password_hash IS NOT NULL`
        if (person === undefined || person.id !== personId) return yield* Effect.fail(new NotInvitee())
        yield* activate(row)
        return { person, workspaceId: row.workspace_id } satisfies Accepted
      }))),
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
