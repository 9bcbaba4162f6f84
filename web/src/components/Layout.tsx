import type { ComponentChildren } from "preact"
import { useEffect, useRef } from "preact/hooks"
import { getWorkspace, signOut } from "../api/console"
import type { Session, WorkspaceRef } from "../api/types"
import { currentRoute, navigate } from "../lib/router"
import { adminPages, type WorkspacePage } from "../lib/workspacePages"
import { useLoad } from "../lib/useLoad"
import { Link } from "./Link"

const pageNames: ReadonlyArray<readonly [WorkspacePage, string]> = [
  ["overview", "Overview"],
  ["keys", "API keys"],
  ["models", "Models"],
  ["exports", "Exports"],
  ["members", "Members"],
  ["settings", "Settings"],
  ["audit", "Audit"]
]

interface LayoutProps {
  readonly session: Session
  readonly workspace: WorkspaceRef | null
  readonly page: WorkspacePage | null
  readonly onSignedOut: () => void
  readonly children: ComponentChildren
}

/** Header (workspace switcher, who is signed in, Sign out), the workspace's navigation, and the page. */
export const Layout = ({ session, workspace, page, onSignedOut, children }: LayoutProps) => {
  const main = useRef<HTMLElement>(null)
  // Moves focus to the new page's content on navigation, as a full page load would for screen readers.
  const route = currentRoute()
  useEffect(() => main.current?.focus(), [workspace?.id, page, route])
  const leave = (): void => {
    // Signed out either way: a failed call (network, expired session) leaves nothing to keep.
    signOut().then(onSignedOut, onSignedOut)
  }
  // The operator opens workspaces it is not a member of: their name comes from the API.
  const [named] = useLoad(
    () => (workspace !== null && workspace.name === workspace.id ? getWorkspace(workspace.id) : Promise.resolve(null)),
    [workspace?.id]
  )
  const workspaceName = named.state === "ready" && named.value !== null ? named.value.name : workspace?.name
  const visible = pageNames.filter(([name]) => workspace?.role === "admin" || !adminPages.has(name))
  return (
    <div class={workspace === null ? "shell no-nav" : "shell"}>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <span class="brand">Workspace API</span>
        {session.operator ? <Link to="workspaces" class="top-link" current={workspace === null && route === "workspaces"}>All workspaces</Link> : null}
        {session.operator ? <Link to="upstreams" class="top-link" current={workspace === null && route === "upstreams"}>Upstreams</Link> : null}
        {!session.operator && session.workspaces.length > 1 ? (
          <label class="switcher">
            <span>Workspace</span>
            <select value={workspace?.id ?? ""} onChange={(event) => {
              const next = session.workspaces.find((w) => w.id === event.currentTarget.value)
              if (next !== undefined) navigate(`w/${next.id}/${next.role === "admin" ? "overview" : "keys"}`)
            }}>
              {session.workspaces.map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
            </select>
          </label>
        ) : null}
        <span class="who">{session.operator ? "Operator" : session.member?.email}</span>
        {/* The operator has no password (ADMIN_TOKEN); a person changes their own. */}
        {session.member === null ? null : <Link to="password" class="top-link" current={page === null && workspace === null && route === "password"}>Change password</Link>}
        <button type="button" class="secondary" onClick={leave}>Sign out</button>
      </header>
      {workspace === null ? null : (
        <nav class="side" aria-label="Workspace">
          <p class="workspace-name">{workspaceName}<span class="role">{workspace.role}</span></p>
          <ul>
            {visible.map(([name, label]) => (
              <li key={name}><Link to={`w/${workspace.id}/${name}`} current={page === name}>{label}</Link></li>
            ))}
          </ul>
        </nav>
      )}
      <main id="main" ref={main} tabIndex={-1}>{children}</main>
    </div>
  )
}
