-- The console's usage splits traffic sent with the workspace's own provider key (BYOK) from traffic sent with
-- the service's key: the API rollups gain byok as part of their key (existing rows: false, as their requests were).
ALTER TABLE usage_api_rollup ADD COLUMN byok boolean NOT NULL DEFAULT false;
ALTER TABLE usage_api_rollup DROP CONSTRAINT usage_api_rollup_pkey;
ALTER TABLE usage_api_rollup ADD PRIMARY KEY (workspace_id, bucket, key_id, endpoint, model, byok);
ALTER TABLE usage_api_rollup_hourly ADD COLUMN byok boolean NOT NULL DEFAULT false;
ALTER TABLE usage_api_rollup_hourly DROP CONSTRAINT usage_api_rollup_hourly_pkey;
ALTER TABLE usage_api_rollup_hourly ADD PRIMARY KEY (workspace_id, bucket, key_id, endpoint, model, byok);

CREATE OR REPLACE FUNCTION usage_rollup_api_requests() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  -- Sorted, so concurrent batches lock rollup rows in the same order.
  INSERT INTO usage_api_rollup AS r
    (workspace_id, bucket, key_id, endpoint, model, byok, requests, failed, input_tokens, output_tokens, cost_usd)
  SELECT workspace_id, usage_bucket(created_at), key_id, endpoint, model, byok, count(*),
         count(*) FILTER (WHERE status >= 400 OR outcome = 'failed'),
         sum(input_tokens), sum(output_tokens), sum(cost_usd)
  FROM new_rows GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (workspace_id, bucket, key_id, endpoint, model, byok) DO UPDATE SET
    requests = r.requests + EXCLUDED.requests,
    failed = r.failed + EXCLUDED.failed,
    input_tokens = r.input_tokens + EXCLUDED.input_tokens,
    output_tokens = r.output_tokens + EXCLUDED.output_tokens,
    cost_usd = r.cost_usd + EXCLUDED.cost_usd;
  INSERT INTO usage_api_rollup_hourly AS r
    (workspace_id, bucket, key_id, endpoint, model, byok, requests, failed, input_tokens, output_tokens, cost_usd)
  SELECT workspace_id, date_trunc('hour', created_at, 'UTC'), key_id, endpoint, model, byok, count(*),
         count(*) FILTER (WHERE status >= 400 OR outcome = 'failed'),
         sum(input_tokens), sum(output_tokens), sum(cost_usd)
  FROM new_rows GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (workspace_id, bucket, key_id, endpoint, model, byok) DO UPDATE SET
    requests = r.requests + EXCLUDED.requests,
    failed = r.failed + EXCLUDED.failed,
    input_tokens = r.input_tokens + EXCLUDED.input_tokens,
    output_tokens = r.output_tokens + EXCLUDED.output_tokens,
    cost_usd = r.cost_usd + EXCLUDED.cost_usd;
  RETURN NULL;
END
$$;
