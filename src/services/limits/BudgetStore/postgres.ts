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
 * Budgets over PostgreSQL, shared by every instance. A reservation is one statement calling `budget_reserve`
 * (sql/0021_budget_reserve.sql): the period rows are made or locked in key order (INSERT … ON CONFLICT DO UPDATE
 * locks an existing row), the unexpired reservations are summed after the lock is held (so every reservation
 * committed before counts), and the reservation is written only when it fits every line. A settlement is one
 * statement.
 */
export const makePostgresBudgetStore: Effect.Effect<BudgetStoreShape, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const failure = Effect.mapError((cause: unknown) => new BudgetStoreFailure({ cause }))

  // One round trip: the function of sql/0021_budget_reserve.sql locks, sums and writes in one statement.
  const reserve = (reservationId: string, lines: ReadonlyArray<BudgetLine>, amountNano: number, ttlMs: number) => {
    const json = JSON.stringify(lines.map((line, index) => ({ k: line.key, s: new Date(line.periodStart).toISOString(), lim: line.limitNano, i: index })))
    return sql<{ refused: number }>`
      SELECT budget_reserve(${json}::jsonb, ${reservationId}::uuid, ${amountNano}::bigint, ${ttlMs}::bigint) AS refused`.pipe(
      failure,
      Effect.map(([row]): ReserveDecision => {
        const refusedLine = Number(row?.refused ?? -1)
        return refusedLine >= 0 ? { allowed: false, refusedLine } : { allowed: true }
      })
    )
  }

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
