import type { WorkspaceSettings } from "./workspaceSettings"

/** A workspace: the tenant that keys, limits, usage and exports belong to. */
export interface Workspace {
  readonly id: string
  readonly name: string
  readonly settings: WorkspaceSettings
  readonly createdAt: Date
}
