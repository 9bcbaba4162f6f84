import { useState } from "preact/hooks"
import { inviteMember } from "../api/console"
import type { Invitation, Role } from "../api/types"
import { formatTime } from "../lib/dates"
import { useAction } from "../lib/useLoad"
import { CopyButton } from "./CopyButton"
import { Field, Select } from "./Field"
import { ErrorNote } from "./Notice"

const roles: ReadonlyArray<{ readonly value: Role; readonly label: string }> = [
  { value: "member", label: "Member" },
  { value: "admin", label: "Admin" }
]

/**
 * Invites someone (again: a fresh link, the previous one void) and shows the link to pass on. The name is a
 * suggestion for a new account; someone who already has an account keeps their own.
 */
export const InviteForm = ({ workspaceId, fixedRole, onInvited }: {
  readonly workspaceId: string
  readonly fixedRole?: Role
  readonly onInvited?: (invitation: Invitation) => void
}) => {
  const [email, setEmail] = useState("")
  const [name, setName] = useState("")
  const [role, setRole] = useState<Role>(fixedRole ?? "member")
  const [invitation, setInvitation] = useState<Invitation | null>(null)
  const invite = useAction(inviteMember)
  return (
    <form
      class="card"
      onSubmit={async (event) => {
        event.preventDefault()
        const answer = await invite.run(workspaceId, email.trim(), name, role)
        if (answer !== undefined) {
          setInvitation(answer)
          setEmail("")
          setName("")
          onInvited?.(answer)
        }
      }}
    >
      <h2>{fixedRole === "admin" ? "Invite the first admin" : "Invite someone"}</h2>
      <div class="row">
        <Field label="Email" type="email" value={email} onInput={setEmail} required />
        <Field label="Name" value={name} onInput={setName} hint="Suggested, for a new account." />
        {fixedRole === undefined ? <Select label="Role" value={role} options={roles} onChange={setRole} /> : null}
      </div>
      <ErrorNote error={invite.error} />
      <button type="submit" disabled={invite.running}>Invite</button>
      {invitation === null ? null : (
        <div class="success" role="status">
          <p>Invitation for {invitation.email} ({invitation.role}), valid until {formatTime(invitation.invitationExpiresAt)}. Send them this link:</p>
          <p><code class="secret" data-testid="invitation-url">{invitation.invitationUrl}</code></p>
          <CopyButton text={invitation.invitationUrl} label="Copy link" />
        </div>
      )}
    </form>
  )
}
