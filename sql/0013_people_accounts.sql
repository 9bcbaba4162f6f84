-- Issue 24: an invitation never touches an existing account. The name an inviter gives belongs to the
-- membership while it is invited (it is what the workspace sees until the person accepts, and the person's
-- name only when the link creates their account); the person's own name is theirs alone.
ALTER TABLE workspace_members ADD COLUMN invited_name text CHECK (length(invited_name) <= 200);
UPDATE workspace_members m SET invited_name = p.name
FROM people p WHERE p.id = m.person_id AND m.accepted_at IS NULL;

-- The operator's one-time password-reset links (valid 1 hour). Only the SHA-256 hash of the token is kept;
-- a new link for a person voids their outstanding ones.
CREATE TABLE password_resets (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash bytea NOT NULL UNIQUE,
  person_id  uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);
CREATE INDEX password_resets_person_idx ON password_resets (person_id);
