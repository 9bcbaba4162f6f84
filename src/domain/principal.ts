import type { Scope } from "./apiKey"
import type { Budget } from "./budgets"
import type { Workspace } from "./workspace"

/** Who is calling: the key, its scopes and its workspace (with settings, at most a second old). */
export interface Principal {
  readonly keyId: string
  readonly scopes: ReadonlyArray<Scope>
  readonly workspace: Workspace
  /** The key's own budget, beside the workspace's (settings.budget). */
  readonly budget?: Budget | undefined
}
