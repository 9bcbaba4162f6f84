import { useState } from "preact/hooks"
import { createWorkspace, listWorkspaces } from "../api/console"
import type { WorkspaceSummary } from "../api/types"
import { Field } from "../components/Field"
import { Pager } from "../components/Pager"
import { InviteForm } from "../components/InviteForm"
import { Link } from "../components/Link"
import { Empty, ErrorNote, LoadFailed, Loading } from "../components/Notice"
import { useAction, useLoad } from "../lib/useLoad"

/** The operator's list of workspaces: search, paging, create one and invite its first admin. */
export const WorkspacesPage = () => {
  const [searchInput, setSearchInput] = useState("")
  const [search, setSearch] = useState("")
  const [cursors, setCursors] = useState<ReadonlyArray<string | undefined>>([undefined])
  const cursor = cursors[cursors.length - 1]
  const [page, reload] = useLoad(() => listWorkspaces({ search: search === "" ? undefined : search, cursor }), [search, cursor])
  const [created, setCreated] = useState<WorkspaceSummary | null>(null)
  return (
    <section>
      <h1>Workspaces</h1>
      <form
        class="toolbar"
        role="search"
        onSubmit={(event) => {
          event.preventDefault()
          setSearch(searchInput.trim())
          setCursors([undefined])
        }}
      >
        <Field label="Search workspaces" type="search" value={searchInput} onInput={setSearchInput} />
        <button type="submit">Search</button>
      </form>
      {page.state === "loading" ? <Loading /> : null}
      {page.state === "failed" ? <LoadFailed error={page.error} onRetry={reload} /> : null}
      {page.state === "ready" && page.value.data.length === 0 ? <Empty>{search === "" ? "No workspaces yet. Create one below." : `No workspace matches “${search}”.`}</Empty> : null}
      {page.state === "ready" && page.value.data.length > 0 ? (
        <div class="table-scroll" tabIndex={0}>
          <table>
            <thead><tr><th scope="col">Name</th><th scope="col">Id</th></tr></thead>
            <tbody>
              {page.value.data.map((workspace) => (
                <tr key={workspace.id}>
                  <th scope="row"><Link to={`w/${workspace.id}/overview`}>{workspace.name}</Link></th>
                  <td><code>{workspace.id}</code></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Pager label="Workspace pages" cursors={cursors} setCursors={setCursors} page={page} />
      <CreateWorkspaceForm onCreated={(workspace) => {
        setCreated(workspace)
        reload()
      }} />
      {created === null ? null : (
        <>
          <p class="notice" role="status">Workspace “{created.name}” created. Invite its first admin:</p>
          <InviteForm workspaceId={created.id} fixedRole="admin" />
        </>
      )}
    </section>
  )
}

const CreateWorkspaceForm = ({ onCreated }: { readonly onCreated: (workspace: WorkspaceSummary) => void }) => {
  const [name, setName] = useState("")
  const create = useAction(createWorkspace)
  return (
    <form
      class="card"
      onSubmit={async (event) => {
        event.preventDefault()
        const workspace = await create.run(name.trim())
        if (workspace !== undefined) {
          setName("")
          onCreated(workspace)
        }
      }}
    >
      <h2>Create a workspace</h2>
      <Field label="Workspace name" value={name} onInput={setName} required />
      <ErrorNote error={create.error} />
      <button type="submit" disabled={create.running || name.trim() === ""}>Create workspace</button>
    </form>
  )
}
