-- Usage ledger: what the five usage exports are made of.
--
-- * Dimension tables (users, assistants, projects, workflows of a workspace) are keyed by
--   (workspace_id, external_id) and upserted by ingestion; email and name follow the latest event.
--   Events reference them through small bigint surrogate keys, so event rows stay narrow.
-- * Event tables (message_events, workflow_runs, api_requests) are APPEND-ONLY: rows are inserted,
--   never updated or deleted (a trigger refuses UPDATE and DELETE). Retention and test resets use
--   TRUNCATE or, once the tables are partitioned by month, dropping old partitions.
-- * Ingestion is idempotent: (workspace_id, event_id) is the primary key of the platform event
--   tables; a retried batch is inserted with ON CONFLICT DO NOTHING.
-- * Every event table has an index on (workspace_id, <time>) for the exports' range scans.
-- Plain PostgreSQL, no extension.

CREATE TABLE workspace_users (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id uuid        NOT NULL REFERENCES workspaces (id),
  external_id  text        NOT NULL CHECK (length(external_id) BETWEEN 1 AND 200),
  email        text,
  name         text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, external_id)
);

CREATE TABLE workspace_assistants (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id uuid        NOT NULL REFERENCES workspaces (id),
  external_id  text        NOT NULL CHECK (length(external_id) BETWEEN 1 AND 200),
  name         text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, external_id)
);

CREATE TABLE workspace_projects (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id uuid        NOT NULL REFERENCES workspaces (id),
  external_id  text        NOT NULL CHECK (length(external_id) BETWEEN 1 AND 200),
  name         text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, external_id)
);

CREATE TABLE workspace_workflows (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id uuid        NOT NULL REFERENCES workspaces (id),
  external_id  text        NOT NULL CHECK (length(external_id) BETWEEN 1 AND 200),
  name         text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, external_id)
);

-- Platform messages (ingested "message" events). Fixed-width columns first: narrower rows.
CREATE TABLE message_events (
  workspace_id    uuid        NOT NULL REFERENCES workspaces (id),
  occurred_at     timestamptz NOT NULL,
  user_ref        bigint      NOT NULL REFERENCES workspace_users (id),
  assistant_ref   bigint      REFERENCES workspace_assistants (id),
  project_ref     bigint      REFERENCES workspace_projects (id),
  input_tokens    integer     NOT NULL CHECK (input_tokens >= 0),
  output_tokens   integer     NOT NULL CHECK (output_tokens >= 0),
  ingested_at     timestamptz NOT NULL DEFAULT now(),
  event_id        text        NOT NULL CHECK (length(event_id) BETWEEN 1 AND 200),
  model           text        NOT NULL,
  feature         text,
  conversation_id text,
  PRIMARY KEY (workspace_id, event_id)
);
CREATE INDEX message_events_workspace_time ON message_events (workspace_id, occurred_at);

-- Workflow runs (ingested "workflow_run" events); exports place a run on the day it started.
CREATE TABLE workflow_runs (
  workspace_id uuid        NOT NULL REFERENCES workspaces (id),
  started_at   timestamptz NOT NULL,
  finished_at  timestamptz NOT NULL,
  workflow_ref bigint      NOT NULL REFERENCES workspace_workflows (id),
  user_ref     bigint      REFERENCES workspace_users (id),
  project_ref  bigint      REFERENCES workspace_projects (id),
  ingested_at  timestamptz NOT NULL DEFAULT now(),
  event_id     text        NOT NULL CHECK (length(event_id) BETWEEN 1 AND 200),
  status       text        NOT NULL CHECK (status IN ('succeeded', 'failed')),
  PRIMARY KEY (workspace_id, event_id),
  CHECK (finished_at >= started_at)
);
CREATE INDEX workflow_runs_workspace_time ON workflow_runs (workspace_id, started_at);

-- Requests forwarded by this service (recorded through UsageRepository, one row per request).
-- key_id has no foreign key: the ledger keeps the id as recorded, whatever happens to the key row.
CREATE TABLE api_requests (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id  uuid          NOT NULL REFERENCES workspaces (id),
  created_at    timestamptz   NOT NULL DEFAULT now(),
  key_id        uuid          NOT NULL,
  status        smallint      NOT NULL CHECK (status BETWEEN 100 AND 599),
  input_tokens  integer       NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
  output_tokens integer       NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
  latency_ms    integer       NOT NULL CHECK (latency_ms >= 0),
  cost_usd      numeric(18, 8) NOT NULL DEFAULT 0 CHECK (cost_usd >= 0),
  endpoint      text          NOT NULL,  -- chat_completions | messages | fim_completions | embeddings
  provider      text          NOT NULL,  -- provider_a | provider_b | provider_c
  region        text          NOT NULL,  -- eu | us
  model         text          NOT NULL
);
CREATE INDEX api_requests_workspace_time ON api_requests (workspace_id, created_at);

-- Append-only guard for the event tables.
CREATE FUNCTION usage_ledger_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'usage ledger table % is append-only (% refused)', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER message_events_append_only BEFORE UPDATE OR DELETE ON message_events
  FOR EACH STATEMENT EXECUTE FUNCTION usage_ledger_refuse_change();
CREATE TRIGGER workflow_runs_append_only BEFORE UPDATE OR DELETE ON workflow_runs
  FOR EACH STATEMENT EXECUTE FUNCTION usage_ledger_refuse_change();
CREATE TRIGGER api_requests_append_only BEFORE UPDATE OR DELETE ON api_requests
  FOR EACH STATEMENT EXECUTE FUNCTION usage_ledger_refuse_change();

-- An instant as ISO 8601 wall time of a zone with that zone's offset: '2026-01-05T00:00:00+01:00'
-- (milliseconds only when non-zero), the format of the exports' timestamp columns and of the API's
-- dateRange. SQL-language and immutable, so the planner inlines it.
CREATE FUNCTION usage_format_in_zone(instant timestamptz, zone text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT to_char(local_time,
                 CASE WHEN date_trunc('second', local_time) = local_time
                      THEN 'YYYY-MM-DD"T"HH24:MI:SS' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.MS' END)
      || CASE WHEN utc_offset < interval '0' THEN '-' || to_char(-utc_offset, 'HH24:MI')
              ELSE '+' || to_char(utc_offset, 'HH24:MI') END
  FROM (SELECT instant AT TIME ZONE zone AS local_time,
               (instant AT TIME ZONE zone) - (instant AT TIME ZONE 'UTC') AS utc_offset) AS parts
$$;
