import type { SqlClient, SqlConnection, SqlError } from "@effect/sql"
import { Effect, Fiber, Option, type Scope, Stream } from "effect"
import type { SqlStatement } from "./exportQueries"
import type { ValueRow } from "./contract"

/** Rows per FETCH: few round trips, a few MB per batch in memory. */
const FETCH_ROWS = 5000
/** Batches fetched ahead while the previous ones are encoded and stored. */
const BATCHES_AHEAD = 2

export interface CursorRead {
  /**
   * The number of rows the cursor will return (the count query, on the same snapshot), counted up to
   * `maxRows + 1`: more than `maxRows` reads as `maxRows + 1`, and then no row is read.
   */
  readonly total: number
  /**
   * The rows as arrays of cell values in the query's column order (cheaper to parse than objects),
   * one array of rows per FETCH, read from the database as they are consumed.
   */
  readonly rows: Stream.Stream<ReadonlyArray<ValueRow>, SqlError.SqlError>
}

/**
 * Opens a server-side cursor over the rows query and, at the same time, runs the count query on a
 * second connection that shares the cursor's snapshot (`pg_export_snapshot`). So:
 * - the row count is known before the first row is consumed, and it is exactly the number of rows
 *   the cursor returns, whatever is ingested meanwhile;
 * - the count and the start of the rows query (its sort) run side by side instead of one after the other;
 * - rows arrive in batches of FETCH_ROWS, the next batches fetched while the current one is encoded;
 * - when the count finds no row or more than `maxRows` (the count statement stops there), the first
 *   FETCH is cancelled at once: a refused export costs the count up to the limit, not the rows query.
 * Both transactions are read-only and end (ROLLBACK) when the scope closes; an interrupted FETCH is
 * cancelled on the server.
 */
export const openExportRead = (
  sql: SqlClient.SqlClient,
  statements: { readonly rows: SqlStatement; readonly count: SqlStatement },
  maxRows: number
): Effect.Effect<CursorRead, SqlError.SqlError, Scope.Scope> =>
  Effect.gen(function*() {
    const cursorConnection = yield* readOnlyTransaction(sql)
    const [snapshot] = yield* query<{ readonly id: string }>(cursorConnection, "SELECT pg_export_snapshot() AS id")
    // SET takes no bind parameters; the id is PostgreSQL's own, checked before it is inlined.
    const snapshotId = SNAPSHOT_ID.test(snapshot?.id ?? "") ? snapshot?.id : undefined
    if (snapshotId === undefined) return yield* Effect.dieMessage(`unexpected snapshot id ${snapshot?.id}`)
    // A cursor is planned for its first rows unless told that all of them will be read.
    yield* query(cursorConnection, "SET LOCAL cursor_tuple_fraction = 1.0")
    yield* query(cursorConnection, `DECLARE export_rows NO SCROLL CURSOR FOR ${statements.rows.text}`, statements.rows.params)
    const fetch = cursorConnection.executeValues(`FETCH ${FETCH_ROWS} FROM export_rows`, [])
    const readScope = yield* Effect.scope
    // The count's connection joins the snapshot before the first FETCH starts: a FETCH that fails (a zone
    // the database does not know) aborts the cursor's transaction, and the snapshot with it.
    const { firstFetch, total } = yield* Effect.scoped(
      Effect.gen(function*() {
        const connection = yield* readOnlyTransaction(sql)
        yield* query(connection, `SET TRANSACTION SNAPSHOT '${snapshotId}'`)
        // In the read's scope: a failed count interrupts it too, before the cursor's ROLLBACK.
        const firstFetch = yield* Effect.forkIn(fetch, readScope)
        const [row] = yield* query<{ readonly row_count: number }>(connection, statements.count.text, statements.count.params)
        return { firstFetch, total: Number(row?.row_count ?? 0) }
      })
    )
    if (total === 0 || total > maxRows) {
      yield* Fiber.interrupt(firstFetch)
      return { total, rows: Stream.empty }
    }
    const first = yield* Fiber.join(firstFetch)
    const rest = Stream.repeatEffectOption(
      Effect.flatMap(Effect.mapError(fetch, Option.some), (batch) =>
        batch.length === 0 ? Effect.fail(Option.none()) : Effect.succeed(batch))
    )
    const rows = first.length === 0
      ? Stream.empty
      : Stream.concat(Stream.succeed(first), first.length < FETCH_ROWS ? Stream.empty : rest).pipe(
        Stream.buffer({ capacity: BATCHES_AHEAD })
      )
    return { total, rows }
  })

const SNAPSHOT_ID = /^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$/i

const query = <A extends object = object>(
  connection: SqlConnection.Connection,
  text: string,
  params: ReadonlyArray<string> = []
): Effect.Effect<ReadonlyArray<A>, SqlError.SqlError> => connection.execute(text, params, undefined)

/** A pooled connection in a read-only REPEATABLE READ transaction, rolled back when the scope closes. */
const readOnlyTransaction = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const connection = yield* sql.reserve
    yield* Effect.acquireRelease(
      query(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"),
      () => Effect.ignore(query(connection, "ROLLBACK"))
    )
    return connection
  })
