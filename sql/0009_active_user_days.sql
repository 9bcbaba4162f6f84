-- Distinct active users per local day without reading one bitmap row per user and day.
--
-- For each workspace and UTC day, 96 counts: users[k + 1] is how many distinct users were active
-- in the 24 hours that start at quarter hour k of that day. A local day of 24 hours in any zone
-- starts on a quarter hour of some UTC day, so the overview reads one row per local day (about 90
-- for 90 days). Local days of another length (DST changes, a zone changing its offset) are counted
-- from the bitmaps of usage_active_users, as before, for those days only.
--
-- A user counts for start quarter k when active on the day at or after k (k <= their last quarter
-- that day) or on the next day before k (k > their first quarter that day): so each user adds at
-- most two runs of k, summed as +1/-1 steps. The counts of day D depend on D and D + 1, so a batch
-- that touches UTC day D recounts D - 1 and D, from the bitmaps (exact, whatever the batches were).

CREATE TABLE usage_active_user_days (
  workspace_id uuid  NOT NULL,
  day          date  NOT NULL,
  users        int[] NOT NULL,
  PRIMARY KEY (workspace_id, day)
);

CREATE FUNCTION usage_recount_active_days(workspaces uuid[], days date[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  -- Concurrent batches of one workspace and day recount one after the other: this lock waits for
  -- the other's commit, and the recount below (a new statement, so a new snapshot under READ
  -- COMMITTED) then sees its bitmaps too. Sorted, so lockers queue in one order.
  INSERT INTO usage_active_user_days (workspace_id, day, users)
  SELECT w, d, array_fill(0, ARRAY[96]) FROM unnest(workspaces, days) AS t(w, d) ORDER BY 1, 2
  ON CONFLICT (workspace_id, day) DO NOTHING;
  PERFORM 1 FROM usage_active_user_days a JOIN unnest(workspaces, days) AS t(w, d) ON a.workspace_id = t.w AND a.day = t.d
  ORDER BY a.workspace_id, a.day FOR UPDATE OF a;

  WITH targets AS (
    SELECT DISTINCT w AS workspace_id, d AS day FROM unnest(workspaces, days) AS t(w, d)
  ),
  -- Per user: the last active quarter of the day and the first of the next (0-based; NULL: none).
  edges AS (
    SELECT t.workspace_id, t.day,
           max(length(rtrim(u.quarters::text, '0')) - 1) FILTER (WHERE u.day = t.day) AS last,
           min(position(B'1' IN u.quarters) - 1) FILTER (WHERE u.day = t.day + 1) AS first
    FROM targets t JOIN usage_active_users u
      ON u.workspace_id = t.workspace_id AND u.day IN (t.day, t.day + 1)
    GROUP BY t.workspace_id, t.day, u.user_ref
  ),
  steps AS (
    SELECT workspace_id, day, 0 AS k, 1 AS step FROM edges WHERE last IS NOT NULL
    UNION ALL
    SELECT workspace_id, day, last + 1, -1 FROM edges WHERE last IS NOT NULL AND (first IS NULL OR first > last)
    UNION ALL
    SELECT workspace_id, day, first + 1, 1 FROM edges WHERE first IS NOT NULL AND (last IS NULL OR first > last)
  ),
  sums AS (
    SELECT workspace_id, day, k, sum(step) AS step FROM steps WHERE k < 96 GROUP BY 1, 2, 3
  ),
  counts AS (
    SELECT t.workspace_id, t.day, q.k,
           sum(coalesce(s.step, 0)) OVER (PARTITION BY t.workspace_id, t.day ORDER BY q.k) AS users
    FROM targets t CROSS JOIN generate_series(0, 95) AS q(k)
    LEFT JOIN sums s ON s.workspace_id = t.workspace_id AND s.day = t.day AND s.k = q.k
  )
  UPDATE usage_active_user_days a SET users = c.users
  FROM (SELECT workspace_id, day, array_agg(users::int ORDER BY k) AS users FROM counts GROUP BY 1, 2) c
  WHERE a.workspace_id = c.workspace_id AND a.day = c.day;
END
$$;

CREATE FUNCTION usage_recount_message_days() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  -- Runs after usage_rollup_message_events (triggers of one event fire in name order), so the
  -- bitmaps already hold this batch.
  PERFORM usage_recount_active_days(array_agg(w ORDER BY w, d), array_agg(d ORDER BY w, d))
  FROM (
    SELECT DISTINCT workspace_id AS w, (occurred_at AT TIME ZONE 'UTC')::date - back AS d
    FROM new_rows, (VALUES (0), (1)) AS b(back)
  ) AS touched;
  RETURN NULL;
END
$$;

CREATE TRIGGER message_events_zz_active_days AFTER INSERT ON message_events
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION usage_recount_message_days();

-- What the bitmaps already hold.
SELECT usage_recount_active_days(array_agg(w ORDER BY w, d), array_agg(d ORDER BY w, d))
FROM (SELECT DISTINCT workspace_id AS w, day - back AS d FROM usage_active_users, (VALUES (0), (1)) AS b(back)) AS touched;
