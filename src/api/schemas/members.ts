/** Members and audit entries: the same shapes in the admin API and the console API. */
import { Schema } from "effect"
import { Email, MemberRole } from "../../domain/console"
import { strictParse } from "../../domain/workspaceSettings"

const Name = Schema.String.pipe(
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(200, { message: () => "name must be at most 200 characters" })
)

export const MemberView = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String).annotations({
    description: "Active: the person's name. Invited: the name the inviter suggested (never an existing person's own)."
  }),
  role: MemberRole,
  status: Schema.Literal("invited", "active"),
  createdAt: Schema.String
}).annotations({ identifier: "Member" })

export const InvitedMember = Schema.Struct({
  ...MemberView.fields,
  invitationUrl: Schema.String.annotations({ description: "Single-use link, valid 7 days. Shown only in this response." }),
  invitationExpiresAt: Schema.String
}).annotations({ identifier: "InvitedMember" })

export const InviteMember = Schema.Struct({ email: Email, name: Schema.optional(Name), role: MemberRole })
  .annotations({ identifier: "InviteMember", ...strictParse })
export const ChangeMember = Schema.Struct({ role: MemberRole }).annotations({ identifier: "ChangeMember", ...strictParse })

export const AuditView = Schema.Struct({
  at: Schema.String,
  actor: Schema.String,
  action: Schema.String,
  target: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AuditEntry" })
export const AuditPageView = Schema.Struct({ data: Schema.Array(AuditView), nextCursor: Schema.NullOr(Schema.String) })
  .annotations({ identifier: "AuditPage" })


export const PasswordResetRequest = Schema.Struct({ email: Email }).annotations({ identifier: "PasswordResetRequest", ...strictParse })
export const PasswordResetLinkView = Schema.Struct({
  resetUrl: Schema.String.annotations({ description: "Single-use link, valid 1 hour. Shown only in this response." }),
  expiresAt: Schema.String
}).annotations({ identifier: "PasswordResetLink" })
