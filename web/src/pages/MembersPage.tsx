import { useState } from "preact/hooks"
import { changeRole, listMembers, removeMember } from "../api/console"
import type { Member, Role, WorkspaceRef } from "../api/types"
import { ConfirmDialog } from "../components/ConfirmDialog"
import { InviteForm } from "../components/InviteForm"
import { Empty, ErrorNote, LoadFailed, Loading } from "../components/Notice"
import { useAction, useLoad } from "../lib/useLoad"

export const MembersPage = ({ workspace }: { readonly workspace: WorkspaceRef }) => {
  const [members, reload] = useLoad(() => listMembers(workspace.id), [workspace.id])
  const [removing, setRemoving] = useState<Member | null>(null)
  const update = useAction((member: Member, role: Role) => changeRole(workspace.id, member.id, role))
  const remove = useAction((member: Member) => removeMember(workspace.id, member.id))
  return (
    <section>
      <h1>Members</h1>
      <p class="lead">Admins manage keys, exports, members and settings; members create and revoke their own completion keys.</p>
      <InviteForm workspaceId={workspace.id} onInvited={reload} />
      <h2>People</h2>
      <ErrorNote error={update.error ?? remove.error} />
      {members.state === "loading" ? <Loading /> : null}
      {members.state === "failed" ? <LoadFailed error={members.error} onRetry={reload} /> : null}
      {members.state === "ready" && members.value.data.length === 0 ? <Empty>No members yet. Invite someone above.</Empty> : null}
      {members.state === "ready" && members.value.data.length > 0 ? (
        <div class="table-scroll" tabIndex={0}>
          <table>
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Status</th><th scope="col">Role</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {members.value.data.map((member) => (
                <tr key={member.id}>
                  <th scope="row">{member.name ?? "—"}</th>
                  <td>{member.email}</td>
                  <td>{member.status === "active" ? "Active" : "Invited"}</td>
                  <td>
                    <label class="visually-hidden" for={`role-${member.id}`}>Role of {member.email}</label>
                    <select
                      id={`role-${member.id}`}
                      value={member.role}
                      disabled={update.running}
                      onChange={async (event) => {
                        await update.run(member, event.currentTarget.value as Role)
                        reload()
                      }}
                    >
                      <option value="member">Member</option>
                      <option value="admin">Admin</option>
                    </select>
                  </td>
                  <td><button type="button" class="danger small" aria-label={`Remove ${member.email}`} onClick={() => setRemoving(member)}>Remove</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {removing === null ? null : (
        <ConfirmDialog
          title={`Remove ${removing.email}?`}
          confirmLabel="Remove"
          busy={remove.running}
          onCancel={() => setRemoving(null)}
          onConfirm={async () => {
            await remove.run(removing)
            setRemoving(null)
            reload()
          }}
        >
          <p>They are signed out at once and lose access to this workspace.</p>
        </ConfirmDialog>
      )}
    </section>
  )
}
