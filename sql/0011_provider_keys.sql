-- Customer-supplied provider keys: one per workspace and provider, sealed with AES-256-GCM under
-- CREDENTIALS_KEY (the service never stores the key in the clear). sealed_with is the id of the key that
-- sealed it, so a rotation finds what is still under the previous key. last4 is all that is ever shown again.
CREATE TABLE workspace_provider_keys (
  workspace_id  uuid        NOT NULL REFERENCES workspaces (id),
  provider      text        NOT NULL,
  sealed        text        NOT NULL,
  sealed_with   text        NOT NULL,
  last4         text        NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  -- "operator" or the console person's email.
  created_by    text        NOT NULL,
  last_used_at  timestamptz,
  -- The provider's last refusal of the key, in the service's own words (never the key, never the upstream's text).
  last_error    text,
  last_error_at timestamptz,
  PRIMARY KEY (workspace_id, provider)
);

CREATE INDEX workspace_provider_keys_sealed_with_idx ON workspace_provider_keys (sealed_with);

-- Whether a forwarded request went upstream with the workspace's own key.
ALTER TABLE api_requests ADD COLUMN byok boolean NOT NULL DEFAULT false;
