-- Budgets (docs/budgets.md): what each budget spent per period, and the reservations of requests in
-- progress. A reservation is made under the period rows' locks (sorted by key, so two requests never wait on
-- each other), counts until it is settled or lapses (`expires_at`, so a crash between reservation and
-- settlement does not hold it forever), and is deleted when settled; lapsed rows are deleted by the next
-- reservation of the same budget. Amounts are whole nano-dollars.
CREATE TABLE budget_periods (
  budget_key   text        NOT NULL,
  period_start timestamptz NOT NULL,
  spent_nano   bigint      NOT NULL DEFAULT 0,
  PRIMARY KEY (budget_key, period_start)
);

CREATE TABLE budget_reservations (
  id           uuid        NOT NULL,
  budget_key   text        NOT NULL,
  period_start timestamptz NOT NULL,
  amount_nano  bigint      NOT NULL,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (id, budget_key)
);
CREATE INDEX budget_reservations_line_idx ON budget_reservations (budget_key, period_start, expires_at);

-- A key's own budget ({ amountUsd, period, alertThresholds? }) and its expiry.
ALTER TABLE api_keys ADD COLUMN budget jsonb, ADD COLUMN expires_at timestamptz;

-- Every instance relearns a key whose expiry changed (sql/0014_api_key_changes.sql).
DROP TRIGGER api_keys_stamp_change ON api_keys;
CREATE TRIGGER api_keys_stamp_change BEFORE INSERT OR UPDATE OF revoked_at, expires_at ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_keys_stamp_change();
