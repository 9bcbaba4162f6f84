import { Data, Duration, type Effect, type Option } from "effect"
import type { MemberRole } from "../../domain/console"
import type { StorageFailure } from "../StorageFailure"
import type { WorkspaceNotFound } from "../Workspaces"

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

/** What every backing of Members provides (the Members Tag's shape). */
export interface MembersShape {
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
}
