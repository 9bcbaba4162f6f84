-- Usage rollups for the console's overview: sums per workspace and 15-minute UTC bucket, kept up
-- to date by statement triggers on the ledger's INSERTs (whatever statement inserts, and with
-- ON CONFLICT DO NOTHING only the rows really inserted are in the transition table).
--
-- Why 15 minutes and not hours: a local day of any IANA zone starts on a quarter hour (India +05:30,
-- Nepal +05:45, Chatham +12:45), so summing buckets gives exact local days for every zone. Hourly
-- buckets would be exact only for whole-hour offsets. The exports keep reading the ledger itself.

CREATE FUNCTION usage_bucket(instant timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT date_bin('15 minutes', instant, timestamptz '2000-01-01 00:00:00+00')
$$;

-- Forwarded API requests per bucket, key, family (endpoint) and model.
CREATE TABLE usage_api_rollup (
  workspace_id  uuid        NOT NULL,
  bucket        timestamptz NOT NULL,
  key_id        uuid        NOT NULL,
  endpoint      text        NOT NULL,
  model         text        NOT NULL,
  requests      bigint      NOT NULL,
  failed        bigint      NOT NULL,
  input_tokens  bigint      NOT NULL,
  output_tokens bigint      NOT NULL,
  cost_usd      numeric(20, 8) NOT NULL,
  PRIMARY KEY (workspace_id, bucket, key_id, endpoint, model)
);

-- Platform messages per bucket and model.
CREATE TABLE usage_message_rollup (
  workspace_id  uuid        NOT NULL,
  bucket        timestamptz NOT NULL,
  model         text        NOT NULL,
  messages      bigint      NOT NULL,
  input_tokens  bigint      NOT NULL,
  output_tokens bigint      NOT NULL,
  PRIMARY KEY (workspace_id, bucket, model)
);

-- Which users were active in each bucket (distinct users of a local day = distinct over its buckets).
CREATE TABLE usage_active_users (
  workspace_id uuid        NOT NULL,
  bucket       timestamptz NOT NULL,
  user_ref     bigint      NOT NULL,
  PRIMARY KEY (workspace_id, bucket, user_ref)
);

CREATE FUNCTION usage_rollup_api_requests() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  -- Sorted, so concurrent batches lock rollup rows in the same order.
  INSERT INTO usage_api_rollup AS r
    (workspace_id, bucket, key_id, endpoint, model, requests, failed, input_tokens, output_tokens, cost_usd)
  SELECT workspace_id, usage_bucket(created_at), key_id, endpoint, model, count(*),
         count(*) FILTER (WHERE status >= 400 OR outcome = 'failed'),
         sum(input_tokens), sum(output_tokens), sum(cost_usd)
  FROM new_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (workspace_id, bucket, key_id, endpoint, model) DO UPDATE SET
    requests = r.requests + EXCLUDED.requests,
    failed = r.failed + EXCLUDED.failed,
    input_tokens = r.input_tokens + EXCLUDED.input_tokens,
    output_tokens = r.output_tokens + EXCLUDED.output_tokens,
    cost_usd = r.cost_usd + EXCLUDED.cost_usd;
  RETURN NULL;
END
$$;

CREATE FUNCTION usage_rollup_message_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO usage_message_rollup AS r (workspace_id, bucket, model, messages, input_tokens, output_tokens)
  SELECT workspace_id, usage_bucket(occurred_at), model, count(*), sum(input_tokens), sum(output_tokens)
  FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (workspace_id, bucket, model) DO UPDATE SET
    messages = r.messages + EXCLUDED.messages,
    input_tokens = r.input_tokens + EXCLUDED.input_tokens,
    output_tokens = r.output_tokens + EXCLUDED.output_tokens;
  INSERT INTO usage_active_users (workspace_id, bucket, user_ref)
  SELECT DISTINCT workspace_id, usage_bucket(occurred_at), user_ref FROM new_rows ORDER BY 1, 2, 3
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER api_requests_rollup AFTER INSERT ON api_requests
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION usage_rollup_api_requests();
CREATE TRIGGER message_events_rollup AFTER INSERT ON message_events
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION usage_rollup_message_events();

-- What the ledger already holds.
INSERT INTO usage_api_rollup (workspace_id, bucket, key_id, endpoint, model, requests, failed, input_tokens, output_tokens, cost_usd)
SELECT workspace_id, usage_bucket(created_at), key_id, endpoint, model, count(*),
       count(*) FILTER (WHERE status >= 400 OR outcome = 'failed'), sum(input_tokens), sum(output_tokens), sum(cost_usd)
FROM api_requests GROUP BY 1, 2, 3, 4, 5;
INSERT INTO usage_message_rollup (workspace_id, bucket, model, messages, input_tokens, output_tokens)
SELECT workspace_id, usage_bucket(occurred_at), model, count(*), sum(input_tokens), sum(output_tokens)
FROM message_events GROUP BY 1, 2, 3;
INSERT INTO usage_active_users (workspace_id, bucket, user_ref)
SELECT DISTINCT workspace_id, usage_bucket(occurred_at), user_ref FROM message_events;
