import { Context, Effect, Layer, Option } from "effect"
import type { ConsoleActor, MemberRole } from "../../domain/console"
import { Members } from "./Members"
import { WorkspaceNotFound, Workspaces } from "../workspaces/Workspaces"
import { type StorageFailure } from "../../platform/StorageFailure"
import { type Workspace } from "../../domain/workspace"

export interface WorkspaceAccess {
  readonly workspace: Workspace
  readonly role: MemberRole
}

/**
 * Which role the signed-in actor has in a workspace: the operator is admin everywhere; a person has
 * their active membership's role. Without one the workspace is "not found": another workspace's
 * resources answer 404, never telling whether they exist.
 */
export class ConsoleAccess extends Context.Tag("ConsoleAccess")<ConsoleAccess, {
  readonly workspace: (actor: ConsoleActor, workspaceId: string) => Effect.Effect<WorkspaceAccess, WorkspaceNotFound | StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    ConsoleAccess,
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const members = yield* Members
      return {
        workspace: (actor, workspaceId) =>
          actor.kind === "operator"
            ? Effect.map(workspaces.get(workspaceId), (workspace) => ({ workspace, role: "admin" as const }))
            : Effect.flatMap(members.roleIn(actor.personId, workspaceId), (role) =>
              Option.match(role, {
                onNone: () => Effect.fail(new WorkspaceNotFound({ id: workspaceId })),
                onSome: (role) => Effect.map(workspaces.get(workspaceId), (workspace) => ({ workspace, role }))
              }))
      }
    })
  )
}
