import { useEffect, useState } from "preact/hooks"
import { whenUnauthorized } from "./api/client"
import { getSession } from "./api/console"
import type { Session, WorkspaceRef } from "./api/types"
import { Layout } from "./components/Layout"
import { Loading } from "./components/Notice"
import { navigate, useRoute } from "./lib/router"
import { adminPages, type WorkspacePage, workspacePages } from "./lib/workspacePages"
import { ApiKeysPage } from "./pages/ApiKeysPage"
import { AuditPage } from "./pages/AuditPage"
import { ChangePasswordPage } from "./pages/ChangePasswordPage"
import { ExportsPage } from "./pages/ExportsPage"
import { InvitationPage } from "./pages/InvitationPage"
import { LoginPage } from "./pages/LoginPage"
import { MembersPage } from "./pages/MembersPage"
import { ModelsPage } from "./pages/ModelsPage"
import { NotFoundPage } from "./pages/NotFoundPage"
import { OverviewPage } from "./pages/OverviewPage"
import { PasswordResetPage } from "./pages/PasswordResetPage"
import { SettingsPage } from "./pages/SettingsPage"
import { UpstreamsPage } from "./pages/UpstreamsPage"
import { WorkspacesPage } from "./pages/WorkspacesPage"

/** A workspace's first page: the overview for admins; members see their keys (usage is the admins'). */
const workspaceHome = (workspace: WorkspaceRef): string => `w/${workspace.id}/${workspace.role === "admin" ? "overview" : "keys"}`

/** Where someone lands after signing in. */
const homeOf = (session: Session): string => {
  if (session.operator) return "workspaces"
  const first = session.workspaces[0]
  return first === undefined ? "no-workspace" : workspaceHome(first)
}

/** The workspace a route names, as the signed-in person sees it (the operator is admin everywhere). */
const workspaceOf = (session: Session, id: string): WorkspaceRef | undefined =>
  session.workspaces.find((w) => w.id === id) ?? (session.operator ? { id, name: id, role: "admin" } : undefined)

/** Replaces the address once rendered (navigating during a render would re-render mid-way). */
const Redirect = ({ to }: { readonly to: string }) => {
  useEffect(() => navigate(to, { replace: true }), [to])
  return <Loading />
}

export const App = () => {
  const route = useRoute()
  const [session, setSession] = useState<Session | null | "loading">("loading")
  const [notice, setNotice] = useState<string | null>(null)

  useEffect(() => {
    getSession().then(setSession, () => setSession(null))
    // Any 401 means the session is over (expired, signed out elsewhere, removed): back to sign-in.
    whenUnauthorized(() => {
      setSession(null)
      setNotice("Your session has ended. Sign in again.")
      navigate("login", { replace: true })
    })
  }, [])

  const signedIn = (next: Session): void => {
    setNotice(null)
    setSession(next)
    navigate(homeOf(next), { replace: true })
  }

  const [first, second, third] = route.split("/")
  // Link pages work signed in or not: an invitation for someone with an account is accepted as themselves.
  if (first === "invitations" && second !== undefined) return <InvitationPage token={second} session={session} onSignedIn={signedIn} />
  if (first === "password-resets" && second !== undefined) return <PasswordResetPage token={second} onSignedIn={signedIn} />
  if (session === "loading") return <Loading />
  if (session === null) {
    return first === "login" ? <LoginPage notice={notice} onSignedIn={signedIn} /> : <Redirect to="login" />
  }
  if (first === "login" || first === "" || first === undefined) return <Redirect to={homeOf(session)} />

  const signedOut = (): void => {
    setSession(null)
    setNotice("You are signed out.")
    navigate("login", { replace: true })
  }

  if (first === "workspaces" && session.operator) {
    return (
      <Layout session={session} workspace={null} page={null} onSignedOut={signedOut}>
        <WorkspacesPage />
      </Layout>
    )
  }
  if (first === "upstreams" && session.operator) {
    return (
      <Layout session={session} workspace={null} page={null} onSignedOut={signedOut}>
        <UpstreamsPage />
      </Layout>
    )
  }
  if (first === "password" && session.member !== null) {
    return (
      <Layout session={session} workspace={null} page={null} onSignedOut={signedOut}>
        <ChangePasswordPage person={session.member} home={homeOf(session)} />
      </Layout>
    )
  }
  if (first === "no-workspace") {
    return (
      <Layout session={session} workspace={null} page={null} onSignedOut={signedOut}>
        <h1>No workspace</h1>
        <p class="empty">You are not a member of any workspace. Ask a workspace administrator for an invitation.</p>
      </Layout>
    )
  }
  const workspace = first === "w" && second !== undefined ? workspaceOf(session, second) : undefined
  const page = third !== undefined && workspacePages.has(third) ? (third as WorkspacePage) : undefined
  if (workspace === undefined || page === undefined || (adminPages.has(page) && workspace.role !== "admin")) {
    return (
      <Layout session={session} workspace={workspace ?? null} page={null} onSignedOut={signedOut}>
        <NotFoundPage home={homeOf(session)} />
      </Layout>
    )
  }
  return (
    <Layout session={session} workspace={workspace} page={page} onSignedOut={signedOut}>
      {page === "overview" ? <OverviewPage workspace={workspace} /> : null}
      {page === "keys" ? <ApiKeysPage workspace={workspace} /> : null}
      {page === "models" ? <ModelsPage workspace={workspace} /> : null}
      {page === "exports" ? <ExportsPage workspace={workspace} /> : null}
      {page === "members" ? <MembersPage workspace={workspace} /> : null}
      {page === "settings" ? <SettingsPage workspace={workspace} /> : null}
      {page === "audit" ? <AuditPage workspace={workspace} /> : null}
    </Layout>
  )
}
