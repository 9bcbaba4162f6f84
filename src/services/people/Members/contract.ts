import { Data, Duration, type Effect, type Option } from "effect"
import type { MemberRole } from "../../../domain/console"
import type { StorageFailure } from "../../../platform/StorageFailure"
import type { WorkspaceNotFound } from "../../workspaces/Workspaces"

/** How long an invitation link stays valid. */
export const invitationLifetime = Duration.days(7)

export interface Member {
  readonly id: string
  readonly workspaceId: string
  readonly personId: string
  readonly email: string
  /**
   * Active: the person's own name. Invited: the name the inviter gave (never the person's: an invitation
   * tells the inviter nothing about an existing account).
   */
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

/**
 * What an invitation link shows whoever holds it: whom (the email the inviter typed, the name they
 * suggested) into which workspace. Nothing about the person's account: whether it exists, its name,
 * its other workspaces.
 */
export interface InvitationInfo {
  readonly email: string
  readonly name: string | null
  readonly role: MemberRole
  readonly workspace: { readonly id: string; readonly name: string }
  readonly expiresAt: Date
}

/** An accepted invitation: the person (as they are now) and the workspace they joined. */
export interface Accepted {
  readonly person: Person
  readonly workspaceId: string
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
/** The invited email already has an account: a link never sets its password. Nothing changed; the link still works. */
export class AccountExists extends Data.TaggedError("AccountExists")<{}> {}
/** The invitation is for another person than the one accepting it. Nothing changed. */
export class NotInvitee extends Data.TaggedError("NotInvitee")<{}> {}

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
  /**
   * Removes the membership: the person's access to the workspace ends at once (every call checks it). Their
   * sessions end too when no active membership is left, never otherwise: one workspace's admin cannot sign a
   * person out of the others.
   */
  readonly remove: (workspaceId: string, memberId: string) => Effect.Effect<Member, MemberNotFound | LastAdmin | StorageFailure>
  readonly invitation: (token: string) => Effect.Effect<InvitationInfo, InvitationGone | StorageFailure>
  /**
   * For an email without an account: creates it — the password, and the name given (else the inviter's
   * suggestion) —, activates the membership and uses up the link, in one step. AccountExists when the email
   * has an account by then: nothing changes.
   */
  readonly acceptWithNewAccount: (
    token: string,
    password: string,
    name: string | undefined
  ) => Effect.Effect<Accepted, InvitationGone | AccountExists | StorageFailure>
  /**
   * The invited person themselves, proven by the caller (their session, or their password just checked):
   * activates the membership and uses up the link; nothing of the account changes. NotInvitee for anyone else.
   */
  readonly acceptAs: (token: string, personId: string) => Effect.Effect<Accepted, InvitationGone | NotInvitee | StorageFailure>
  /** The person with this email and password, or None; costs the same whether or not the email exists. */
  readonly verify: (email: string, password: string) => Effect.Effect<Option.Option<Person>, StorageFailure>
  readonly personByEmail: (email: string) => Effect.Effect<Option.Option<Person>, StorageFailure>
  /** Active memberships of a person. */
  readonly workspacesOf: (personId: string) => Effect.Effect<ReadonlyArray<Membership>, StorageFailure>
  readonly roleIn: (personId: string, workspaceId: string) => Effect.Effect<Option.Option<MemberRole>, StorageFailure>
}
