import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type BudgetLine, type BudgetStoreShape, BudgetStoreFailure, type ReserveDecision } from "./contract"

/** Lines as one JSON parameter (key, period start), sorted by key: every transaction locks them in one order. */
const linesJson = (lines: ReadonlyArray<BudgetLine>): string =>
  JSON.stringify(
    lines
      .map((line) => ({ k: line.key, s: new Date(line.periodStart).toISOString() }))
      .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
  )

/**
 * Budgets over PostgreSQL, shared by every instance. A reservation is one transaction: the period rows are
 * made or locked (INSERT … ON CONFLICT DO UPDATE locks an existing row), the unexpired reservations are summed
 * in a statement that starts after the locks are held (so it sees every reservation committed before), and the
 * reservation is written only when it fits every line. A settlement is one statement.
 */
export const makePostgresBudgetStore: Effect.Effect<BudgetStoreShape, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const failure = Effect.mapError((cause: unknown) => new BudgetStoreFailure({ cause }))

  const reserve = (reservationId: string, lines: ReadonlyArray<BudgetLine>, amountNano: number, ttlMs: number) =>
    sql.withTransaction(Effect.gen(function*() {
      const json = linesJson(lines)
      const locked = yield* sql<{ budget_key: string; spent: string }>`
        INSERT INTO budget_periods AS p (budget_key, period_start)
        SELECT l.k, l.s FROM jsonb_to_recordset(${json}::jsonb) AS l(k text, s timestamptz)
        ON CONFLICT (budget_key, period_start) DO UPDATE SET spent_nano = p.spent_nano
        RETURNING p.budget_key, p.spent_nano::text AS spent`
      // Lapsed reservations of these budgets go now (they no longer count); one being settled right now is skipped,
      // not waited for: its settlement deletes it.
      yield* sql`
        DELETE FROM budget_reservations WHERE (id, budget_key) IN (
          SELECT id, budget_key FROM budget_reservations
          WHERE budget_key IN (SELECT l.k FROM jsonb_to_recordset(${json}::jsonb) AS l(k text)) AND expires_at <= now()
          FOR UPDATE SKIP LOCKED)`
      const held = yield* sql<{ budget_key: string; held: string }>`
        SELECT r.budget_key, sum(r.amount_nano)::text AS held
        FROM budget_reservations r JOIN jsonb_to_recordset(${json}::jsonb) AS l(k text, s timestamptz)
          ON r.budget_key = l.k AND r.period_start = l.s
        WHERE r.expires_at > now()
        GROUP BY r.budget_key`
      const spentOf = new Map(locked.map((row) => [row.budget_key, Number(row.spent)]))
      const heldOf = new Map(held.map((row) => [row.budget_key, Number(row.held)]))
      const refusedLine = lines.findIndex((line) =>
        (spentOf.get(line.key) ?? 0) + (heldOf.get(line.key) ?? 0) + amountNano > line.limitNano
      )
      if (refusedLine >= 0) return { allowed: false, refusedLine } satisfies ReserveDecision
      yield* sql`
        INSERT INTO budget_reservations (id, budget_key, period_start, amount_nano, expires_at)
        SELECT ${reservationId}::uuid, l.k, l.s, ${amountNano}::bigint, now() + ${ttlMs}::bigint * interval '1 millisecond'
        FROM jsonb_to_recordset(${json}::jsonb) AS l(k text, s timestamptz)`
      return { allowed: true } satisfies ReserveDecision
    })).pipe(failure)

  const settle = (reservationId: string, lines: ReadonlyArray<BudgetLine>, costNano: number) =>
    sql<{ budget_key: string; spent: string }>`
      WITH gone AS (DELETE FROM budget_reservations WHERE id = ${reservationId}::uuid)
      UPDATE budget_periods p SET spent_nano = p.spent_nano + ${costNano}::bigint
      FROM jsonb_to_recordset(${linesJson(lines)}::jsonb) AS l(k text, s timestamptz)
      WHERE p.budget_key = l.k AND p.period_start = l.s
      RETURNING p.budget_key, p.spent_nano::text AS spent`.pipe(
      failure,
      Effect.map((rows) => {
        const after = new Map(rows.map((row) => [row.budget_key, Number(row.spent)]))
        return lines.map((line) => {
          const afterNano = after.get(line.key) ?? costNano
          return { beforeNano: afterNano - costNano, afterNano }
        })
      })
    )

  const usage = (lines: ReadonlyArray<BudgetLine>) => {
    const json = linesJson(lines)
    return sql<{ k: string; spent: string; held: string }>`
      SELECT l.k,
             coalesce((SELECT p.spent_nano FROM budget_periods p WHERE p.budget_key = l.k AND p.period_start = l.s), 0)::text AS spent,
             coalesce((SELECT sum(r.amount_nano) FROM budget_reservations r
                       WHERE r.budget_key = l.k AND r.period_start = l.s AND r.expires_at > now()), 0)::text AS held
      FROM jsonb_to_recordset(${json}::jsonb) AS l(k text, s timestamptz)`.pipe(
      failure,
      Effect.map((rows) => {
        const byKey = new Map(rows.map((row) => [row.k, row]))
        return lines.map((line) => {
          const row = byKey.get(line.key)
          return { spentNano: Number(row?.spent ?? 0), reservedNano: Number(row?.held ?? 0) }
        })
      })
    )
  }

  return { reserve, settle, usage }
})
