import { useState } from "preact/hooks"
import { listAudit } from "../api/console"
import type { WorkspaceRef } from "../api/types"
import { Field } from "../components/Field"
import { Pager } from "../components/Pager"
import { Empty, LoadFailed, Loading } from "../components/Notice"
import { formatTime } from "../lib/dates"
import { useLoad } from "../lib/useLoad"

/** The workspace's audit log, newest first, a page at a time, optionally one action only. */
export const AuditPage = ({ workspace }: { readonly workspace: WorkspaceRef }) => {
  const [actionInput, setActionInput] = useState("")
  const [action, setAction] = useState("")
  // The cursors of the pages seen so far, so Previous works without the server paging backwards.
  const [cursors, setCursors] = useState<ReadonlyArray<string | undefined>>([undefined])
  const cursor = cursors[cursors.length - 1]
  const [page, reload] = useLoad(() => listAudit(workspace.id, { cursor, action: action === "" ? undefined : action }), [workspace.id, cursor, action])
  return (
    <section>
      <h1>Audit</h1>
      <p class="lead">Every change made in this workspace by a person or the operator.</p>
      <form
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault()
          setAction(actionInput.trim())
          setCursors([undefined])
        }}
      >
        <Field label="Action" type="search" value={actionInput} onInput={setActionInput} hint="e.g. api_key.created; empty for all." />
        <button type="submit">Filter</button>
      </form>
      {page.state === "loading" ? <Loading /> : null}
      {page.state === "failed" ? <LoadFailed error={page.error} onRetry={reload} /> : null}
      {page.state === "ready" && page.value.data.length === 0 ? <Empty>{action === "" ? "Nothing recorded yet." : `No “${action}” entries.`}</Empty> : null}
      {page.state === "ready" && page.value.data.length > 0 ? (
        <div class="table-scroll" tabIndex={0}>
          <table>
            <thead>
              <tr><th scope="col">Time</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Address</th></tr>
            </thead>
            <tbody>
              {page.value.data.map((entry, index) => (
                <tr key={`${entry.at}-${index}`}>
                  <td class="nowrap">{formatTime(entry.at)}</td><td>{entry.actor}</td><th scope="row">{entry.action}</th>
                  <td>{entry.target ?? "—"}</td><td>{entry.address ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Pager label="Audit pages" cursors={cursors} setCursors={setCursors} page={page} />
    </section>
  )
}
