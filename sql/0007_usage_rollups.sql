-- Usage rollups for the console's overview: sums per workspace and 15-minute UTC bucket, kept up
-- to date by statement triggers on the ledger's INSERTs (whatever statement inserts, and with
-- ON CONFLICT DO NOTHING only the rows really inserted are in the transition table).
--
-- Why 15 minutes: a local day of any IANA zone starts on a quarter hour (India +05:30, Nepal +05:45,
-- Chatham +12:45), so summing buckets gives exact local days for every zone. Most zones' days start
-- on a whole UTC hour, though, so the same sums are also kept per hour (a quarter of the rows): the
-- overview reads the hourly tables when every local midnight of the range is on a whole hour, the
-- quarter-hour ones otherwise. The exports keep reading the ledger itself.

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

CREATE TABLE usage_api_rollup_hourly (LIKE usage_api_rollup INCLUDING ALL);

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

CREATE TABLE usage_message_rollup_hourly (LIKE usage_message_rollup INCLUDING ALL);

-- Which users were active when: one row per user and UTC day, with a bit per quarter hour of that
-- day (bit 0 = 00:00–00:15 UTC). A local day of any zone is one or two parts of UTC days, each a
-- mask of quarter hours, so distinct active users per local day need no row per user and bucket.
CREATE TABLE usage_active_users (
  workspace_id uuid    NOT NULL,
  day          date    NOT NULL,
  user_ref     bigint  NOT NULL,
  quarters     bit(96) NOT NULL,
  PRIMARY KEY (workspace_id, day, user_ref)
);

-- The bit of an instant's quarter hour within its UTC day.
CREATE FUNCTION usage_quarter_bit(instant timestamptz) RETURNS bit(96)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT (B'1' || repeat('0', 95))::bit(96)
    >> (extract(hour FROM instant AT TIME ZONE 'UTC')::int * 4 + extract(minute FROM instant AT TIME ZONE 'UTC')::int / 15)
$$;

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
  INSERT INTO usage_api_rollup_hourly AS r
    (workspace_id, bucket, key_id, endpoint, model, requests, failed, input_tokens, output_tokens, cost_usd)
  SELECT workspace_id, date_trunc('hour', created_at, 'UTC'), key_id, endpoint, model, count(*),
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
  INSERT INTO usage_message_rollup_hourly AS r (workspace_id, bucket, model, messages, input_tokens, output_tokens)
  SELECT workspace_id, date_trunc('hour', occurred_at, 'UTC'), model, count(*), sum(input_tokens), sum(output_tokens)
  FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (workspace_id, bucket, model) DO UPDATE SET
    messages = r.messages + EXCLUDED.messages,
    input_tokens = r.input_tokens + EXCLUDED.input_tokens,
    output_tokens = r.output_tokens + EXCLUDED.output_tokens;
  INSERT INTO usage_active_users AS u (workspace_id, day, user_ref, quarters)
  SELECT workspace_id, (occurred_at AT TIME ZONE 'UTC')::date, user_ref, bit_or(usage_quarter_bit(occurred_at))
  FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (workspace_id, day, user_ref) DO UPDATE SET quarters = u.quarters | EXCLUDED.quarters;
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
INSERT INTO usage_api_rollup_hourly
SELECT workspace_id, date_trunc('hour', bucket, 'UTC'), key_id, endpoint, model,
       sum(requests), sum(failed), sum(input_tokens), sum(output_tokens), sum(cost_usd)
FROM usage_api_rollup GROUP BY 1, 2, 3, 4, 5;
INSERT INTO usage_message_rollup_hourly
SELECT workspace_id, date_trunc('hour', bucket, 'UTC'), model, sum(messages), sum(input_tokens), sum(output_tokens)
FROM usage_message_rollup GROUP BY 1, 2, 3;
INSERT INTO usage_active_users (workspace_id, day, user_ref, quarters)
SELECT workspace_id, (occurred_at AT TIME ZONE 'UTC')::date, user_ref, bit_or(usage_quarter_bit(occurred_at))
FROM message_events GROUP BY 1, 2, 3;
