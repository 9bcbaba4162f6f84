import { Context, Layer } from "effect"
import { PeopleTables } from "../peopleTables"
import type { MembersShape } from "./contract"
import { makeMemoryMembers } from "./memory"
import { makePostgresMembers } from "./postgres"

export * from "./contract"

/**
 * People, their memberships in workspaces and their invitations. A person is one email, global across
 * workspaces; a membership becomes active when the person accepts an invitation to it. An invitation is
 * a workspace's: it never sets, resets, renames or reveals anything of an existing account (a password is
 * changed by its owner or reset through the operator's link: see Passwords).
 */
export class Members extends Context.Tag("Members")<Members, MembersShape>() {
  static readonly layer = Layer.effect(Members, makePostgresMembers)

  /** For tests and the in-memory app; shares `PeopleTables` with `Sessions.memory` when built into one app. */
  static readonly memory = Layer.effect(Members, makeMemoryMembers).pipe(Layer.provide(PeopleTables.memory))
}
