-- A workspace's webhooks. The secret signs every delivery (Standard Webhooks), so it is kept as it was
-- issued; it is shown to the caller once, when the webhook is created.
CREATE TABLE webhooks (
  id           uuid        PRIMARY KEY,
  workspace_id uuid        NOT NULL REFERENCES workspaces (id),
  url          text        NOT NULL,
  events       text[]      NOT NULL,
  secret       text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX webhooks_workspace_idx ON webhooks (workspace_id, created_at);

-- Every event announced, once by its id: the id is made from what the event announces, so instances that
-- announce the same threshold insert the same row and only the first one queues deliveries.
CREATE TABLE webhook_events (
  id           text        PRIMARY KEY,
  workspace_id uuid        NOT NULL,
  type         text        NOT NULL,
  -- The JSON sent, the same bytes on every attempt.
  body         text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- One event to one webhook. state: pending (next_at: when it is due, or until when a sender holds it),
-- delivered, or abandoned (every retry failed). attempts: the attempts claimed so far.
CREATE TABLE webhook_deliveries (
  webhook_id uuid        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id   text        NOT NULL REFERENCES webhook_events (id),
  state      text        NOT NULL DEFAULT 'pending',
  attempts   integer     NOT NULL DEFAULT 0,
  next_at    timestamptz NOT NULL,
  PRIMARY KEY (webhook_id, event_id)
);

CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_at) WHERE state = 'pending';

-- Each attempt and its outcome, as the deliveries list shows them.
CREATE TABLE webhook_attempts (
  id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_id      uuid        NOT NULL,
  event_id        text        NOT NULL,
  attempt         integer     NOT NULL,
  at              timestamptz NOT NULL,
  -- delivered, failed (another attempt will come) or abandoned (none will).
  outcome         text        NOT NULL,
  response_status integer,
  error           text,
  FOREIGN KEY (webhook_id, event_id) REFERENCES webhook_deliveries (webhook_id, event_id) ON DELETE CASCADE
);

CREATE INDEX webhook_attempts_webhook_idx ON webhook_attempts (webhook_id, at DESC, id DESC);
