-- Every export that wrote a file, so the console lists a workspace's recent exports (with a freshly
-- signed link) while their links live, in whatever browser or instance. The link's expiry is kept:
-- a link signed again later must not outlive the file (local storage sweeps it after the TTL).
CREATE TABLE export_runs (
  id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id    uuid        NOT NULL REFERENCES workspaces (id),
  data_type       text        NOT NULL,
  -- The resolved range, ISO 8601 with the zone's offset, as the export's answer says it.
  range_from      text        NOT NULL,
  range_to        text        NOT NULL,
  timezone        text        NOT NULL,
  record_count    integer     NOT NULL,
  file_path       text        NOT NULL,
  -- Console runs: operator or the person's email; public export calls: the API key (its name is
  -- read when listing, so a renamed key shows its current name).
  created_by      text,
  created_by_key  uuid        REFERENCES api_keys (id),
  created_at      timestamptz NOT NULL DEFAULT now(),
  link_expires_at timestamptz NOT NULL,
  CHECK ((created_by IS NULL) <> (created_by_key IS NULL))
);

CREATE INDEX export_runs_recent_idx ON export_runs (workspace_id, link_expires_at DESC);
