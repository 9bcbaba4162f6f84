import { Context, Effect, Layer, Ref } from "effect"
import type { MemberRole } from "../../domain/console"

/** A row of each table of people, kept in memory: what the PostgreSQL tables of migrations 0007 and 0013 hold. */
export interface PersonRow {
  readonly id: string
  readonly email: string
  readonly name: string | null
  readonly passwordHash: string | null
}

export interface MembershipRow {
  readonly id: string
  readonly workspaceId: string
  readonly personId: string
  readonly role: MemberRole
  /** The name the inviter gave: shown while invited, the person's only when the link creates their account. */
  readonly invitedName: string | null
  readonly acceptedAt: Date | null
  readonly createdAt: Date
}

export interface InvitationRow {
  readonly id: string
  /** Hex of the token's SHA-256. */
  readonly tokenHash: string
  readonly memberId: string
  readonly expiresAt: Date
  readonly usedAt: Date | null
}

export interface PasswordResetRow {
  readonly id: string
  /** Hex of the token's SHA-256. */
  readonly tokenHash: string
  readonly personId: string
  readonly expiresAt: Date
  readonly usedAt: Date | null
}

export interface SessionRow {
  readonly personId: string | null
  readonly operator: boolean
  readonly expiresAt: Date
  readonly lastSeenAt: Date
}

export interface PeopleState {
  readonly people: ReadonlyMap<string, PersonRow>
  readonly memberships: ReadonlyMap<string, MembershipRow>
  readonly invitations: ReadonlyMap<string, InvitationRow>
  readonly passwordResets: ReadonlyMap<string, PasswordResetRow>
  /** By the hex of the session id's hash. */
  readonly sessions: ReadonlyMap<string, SessionRow>
}

/**
 * The people, memberships, invitations, reset links and console sessions of the in-memory backings. One
 * state for `Members.memory`, `Passwords.memory` and `Sessions.memory`, as one database is for their
 * `.layer`s: a removal from a person's last workspace or a new password ends their sessions, and a session
 * shows the person's email.
 */
export class PeopleTables extends Context.Tag("PeopleTables")<PeopleTables, Ref.Ref<PeopleState>>() {
  /**
   * One value: layers are shared within a build, so `Members.memory` and `Sessions.memory` built into one
   * app (or one `Layer.mergeAll`) see the same tables.
   */
  static readonly memory = Layer.effect(
    PeopleTables,
    Ref.make<PeopleState>({
      people: new Map(),
      memberships: new Map(),
      invitations: new Map(),
      passwordResets: new Map(),
      sessions: new Map()
    })
  )
}

/** Drops every session of a person (a removal from their last workspace, a new password), but the one kept (hex of its hash). */
export const withoutSessionsOf = (state: PeopleState, personId: string, keep?: string): PeopleState => ({
  ...state,
  sessions: new Map([...state.sessions].filter(([key, session]) => session.personId !== personId || key === keep))
})

/** The current time as a Date, from the Clock (TestClock in unit tests). */
export const currentDate = Effect.clockWith((clock) => Effect.map(clock.currentTimeMillis, (ms) => new Date(ms)))
