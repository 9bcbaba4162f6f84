// The pages of a workspace: the app (App.tsx) routes to them, the layout (components/Layout.tsx) lists them.

export type WorkspacePage = "overview" | "keys" | "models" | "exports" | "members" | "settings" | "audit"

/** Pages only a workspace's admins (and the operator) may open: the server refuses the rest anyway. */
export const adminPages: ReadonlySet<WorkspacePage> = new Set(["overview", "exports", "members", "settings", "audit"])

/** Every page of a workspace, as a route names it. */
export const workspacePages: ReadonlySet<string> = new Set(["overview", "keys", "models", "exports", "members", "settings", "audit"])
