-- A reservation in one round trip (sql/0020_budgets.sql): each budget's period row made or locked, in key order
-- (so two requests never wait on each other), its lapsed reservations deleted, its unexpired ones summed by a
-- statement that starts after the lock is held (a VOLATILE function's statements each see a fresh snapshot, so
-- every reservation committed before the lock counts), and the reservation written only when it fits every
-- line. Answers the index (in the caller's list) of the first line it does not fit, or -1 when it was written.
CREATE FUNCTION budget_reserve(p_lines jsonb, p_id uuid, p_amount bigint, p_ttl_ms bigint) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  line record;
  spent bigint;
  held bigint;
BEGIN
  FOR line IN SELECT l.k, l.s, l.lim, l.i FROM jsonb_to_recordset(p_lines) AS l(k text, s timestamptz, lim bigint, i integer) ORDER BY l.k LOOP
    INSERT INTO budget_periods AS p (budget_key, period_start) VALUES (line.k, line.s)
      ON CONFLICT (budget_key, period_start) DO UPDATE SET spent_nano = p.spent_nano
      RETURNING p.spent_nano INTO spent;
    -- One being settled right now is skipped, not waited for: its settlement deletes it.
    DELETE FROM budget_reservations WHERE (id, budget_key) IN (
      SELECT r.id, r.budget_key FROM budget_reservations r
      WHERE r.budget_key = line.k AND r.expires_at <= now() FOR UPDATE SKIP LOCKED);
    SELECT coalesce(sum(r.amount_nano), 0) INTO held FROM budget_reservations r
      WHERE r.budget_key = line.k AND r.period_start = line.s AND r.expires_at > now();
    IF spent + held + p_amount > line.lim THEN
      RETURN line.i;
    END IF;
  END LOOP;
  INSERT INTO budget_reservations (id, budget_key, period_start, amount_nano, expires_at)
    SELECT p_id, l.k, l.s, p_amount, now() + p_ttl_ms * interval '1 millisecond'
    FROM jsonb_to_recordset(p_lines) AS l(k text, s timestamptz);
  RETURN -1;
END
$$;
