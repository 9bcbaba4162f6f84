-- Exactly once, and nothing blocked by one bad record (issue 13).
--
-- record_id: the service's own id of a forwarded request's record, made once when the request ends
-- and kept in the local usage journal. It is the idempotency key of the ledger: a batch written
-- twice (a retry after an unanswered commit, a journal replayed after a crash) adds nothing twice.
-- Not the request id: a caller may choose its own x-request-id, and reusing one must not erase a
-- request from the bill. Rows written before this migration have none.
--
-- clamped: the upstream reported a usage figure out of its column's range (a fraction, a huge or
-- negative count, NaN), and the record carries the nearest bound instead.
ALTER TABLE api_requests
  ADD COLUMN record_id uuid,
  ADD COLUMN clamped   boolean NOT NULL DEFAULT false;

CREATE UNIQUE INDEX api_requests_workspace_record ON api_requests (workspace_id, record_id);

-- Records the ledger refused even alone (after the batch that held them was split down to them):
-- kept whole, as the journal had them, with the database's error, so that nothing is lost and an
-- operator can repair and re-insert them. Never blocks the other records.
CREATE TABLE api_requests_dead_letter (
  record_id    uuid        PRIMARY KEY,
  workspace_id text,
  record       text        NOT NULL,
  error        text        NOT NULL,
  failed_at    timestamptz NOT NULL DEFAULT now()
);
