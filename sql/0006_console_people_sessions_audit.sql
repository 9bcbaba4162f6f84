-- People of the web console, their memberships in workspaces, invitations, sessions, sign-in
-- throttling and the audit log. Secrets are never stored: invitation tokens and session ids as
-- SHA-256 hashes (256-bit random values), passwords as scrypt with their parameters and salt.

-- One person per email (lower-cased), whatever the number of workspaces they belong to.
CREATE TABLE people (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email         text NOT NULL UNIQUE CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 320),
  name          text CHECK (length(name) <= 200),
  -- 'scrypt$N$r$p$salt$hash' (base64url); NULL until the first invitation is accepted.
  password_hash text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workspace_members (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  person_id    uuid NOT NULL REFERENCES people (id),
  role         text NOT NULL CHECK (role IN ('admin', 'member')),
  -- NULL while invited: the membership counts once the person accepted an invitation to it.
  accepted_at  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, person_id)
);
CREATE INDEX workspace_members_person_idx ON workspace_members (person_id);

-- Single-use invitation links; a new invitation of the same membership replaces the outstanding ones.
CREATE TABLE invitations (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash   bytea NOT NULL UNIQUE,
  member_id    uuid NOT NULL REFERENCES workspace_members (id) ON DELETE CASCADE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz
);
CREATE INDEX invitations_member_idx ON invitations (member_id);

-- Console sessions: a person's, or the operator's (person_id NULL). Looked up on every console call,
-- so a sign-out or a removal is seen by every instance at once.
CREATE TABLE console_sessions (
  id_hash      bytea PRIMARY KEY,
  person_id    uuid REFERENCES people (id) ON DELETE CASCADE,
  operator     boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  CHECK (operator = (person_id IS NULL))
);
CREATE INDEX console_sessions_person_idx ON console_sessions (person_id);

-- Failed sign-ins, per subject ('email:<email>' or 'address:<ip>'), for throttling across instances.
CREATE TABLE sign_in_failures (
  subject   text NOT NULL,
  failed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sign_in_failures_subject_idx ON sign_in_failures (subject, failed_at);

-- Every change by a person or the operator. workspace_id NULL: not tied to one workspace.
CREATE TABLE audit_log (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id uuid REFERENCES workspaces (id),
  at           timestamptz NOT NULL DEFAULT now(),
  actor        text NOT NULL,
  action       text NOT NULL,
  target       text,
  address      text
);
CREATE INDEX audit_log_workspace_idx ON audit_log (workspace_id, id DESC);

-- Who created each key: 'operator' (admin API, CLI or the operator in the console) or a person's email.
ALTER TABLE api_keys
  ADD COLUMN created_by        text NOT NULL DEFAULT 'operator',
  ADD COLUMN created_by_person uuid REFERENCES people (id);

-- The admin API's workspace list searches by name.
CREATE INDEX workspaces_created_idx ON workspaces (created_at DESC, id DESC);
