-- The API rollups of a batch from one grouping of its rows: the quarter-hour sums are worked out once, and the
-- hourly sums from them (a quarter hour lies within its UTC hour), instead of grouping the batch's rows twice.
-- Same sums, same rows. The two groupings of the batch's rows (sorted on text keys) made the trigger about 5 µs of
-- PostgreSQL's time a row of a 1,000-row batch; one grouping 0.5–2.4 µs (EXPLAIN ANALYZE of the insert, medians of
-- 9, two runs; the whole insert 18.8–19.6 → 15.1–16.1 ms for 1,000 rows).
CREATE OR REPLACE FUNCTION usage_rollup_api_requests() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  -- Sorted, so concurrent batches lock rollup rows in the same order. The hourly insert, a sub-statement nobody
  -- reads, runs after the main one: the quarter-hour rows are locked first, then the hourly ones, as before.
  WITH quarters AS MATERIALIZED (
    SELECT workspace_id, usage_bucket(created_at) AS bucket, key_id, endpoint, model, byok, count(*) AS requests,
           count(*) FILTER (WHERE status >= 400 OR outcome = 'failed') AS failed,
           sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd
    FROM new_rows GROUP BY 1, 2, 3, 4, 5, 6
  ), hourly AS (
    INSERT INTO usage_api_rollup_hourly AS r
      (workspace_id, bucket, key_id, endpoint, model, byok, requests, failed, input_tokens, output_tokens, cost_usd)
    SELECT workspace_id, date_trunc('hour', bucket, 'UTC'), key_id, endpoint, model, byok, sum(requests), sum(failed),
           sum(input_tokens), sum(output_tokens), sum(cost_usd)
    FROM quarters GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (workspace_id, bucket, key_id, endpoint, model, byok) DO UPDATE SET
      requests = r.requests + EXCLUDED.requests,
      failed = r.failed + EXCLUDED.failed,
      input_tokens = r.input_tokens + EXCLUDED.input_tokens,
      output_tokens = r.output_tokens + EXCLUDED.output_tokens,
      cost_usd = r.cost_usd + EXCLUDED.cost_usd
  )
  INSERT INTO usage_api_rollup AS r
    (workspace_id, bucket, key_id, endpoint, model, byok, requests, failed, input_tokens, output_tokens, cost_usd)
  SELECT * FROM quarters ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (workspace_id, bucket, key_id, endpoint, model, byok) DO UPDATE SET
    requests = r.requests + EXCLUDED.requests,
    failed = r.failed + EXCLUDED.failed,
    input_tokens = r.input_tokens + EXCLUDED.input_tokens,
    output_tokens = r.output_tokens + EXCLUDED.output_tokens,
    cost_usd = r.cost_usd + EXCLUDED.cost_usd;
  RETURN NULL;
END
$$;
