import type * as Pg from "pg"

/** How long past the server's own statement timeout a query may stay unanswered before its connection is closed. */
export const queryDeadlineMarginMs = 500

/** The error a query gets when its connection is closed for not answering in time. */
export class QueryDeadlinePassed extends Error {
  readonly code = "query_deadline_passed"
  constructor(readonly deadlineMs: number) {
    super(`no answer from the database within ${deadlineMs} ms: connection closed`)
  }
}

type QueryArguments = ReadonlyArray<unknown>
type Callback = (...results: ReadonlyArray<unknown>) => void

/**
 * A client-side deadline on every query of the pool's connections. PostgreSQL's statement_timeout is
 * enforced by the server: a server that is frozen (stopped, its host paused, a network partition that
 * drops packets) never sends the cancellation, and a request that holds a connection would wait as
 * long as the freeze lasts. Past the deadline the connection's socket is destroyed: the query (and
 * any queued on that connection) fails at once with QueryDeadlinePassed, and the pool discards the
 * connection. The deadline is the statement timeout plus a margin, so a server that is alive answers
 * first with its own, clearer, cancellation.
 *
 * Queries given a callback are timed (every query of @effect/sql-pg and of the pool is); a query
 * without one (a promise or a submittable such as a cursor) is left as it is.
 */
export const armQueryDeadlines = (pool: Pg.Pool, deadlineMs: number): void => {
  pool.on("connect", (client: Pg.PoolClient) => {
    // A connection closed here emits 'error' also while nobody listens (checked out, between queries):
    // never an unhandled 'error' event; its queries get the error.
    client.on("error", () => {})
    const query = client.query.bind(client) as unknown as (...args: QueryArguments) => unknown
    const timed = (...args: QueryArguments): unknown => {
      const callback = args.at(-1)
      if (typeof callback !== "function") return query(...args)
      const timer = setTimeout(() => client.connection.stream.destroy(new QueryDeadlinePassed(deadlineMs)), deadlineMs)
      timer.unref()
      return query(...args.slice(0, -1), (...results: ReadonlyArray<unknown>) => {
        clearTimeout(timer)
        ;(callback as Callback)(...results)
      })
    }
    Object.assign(client, { query: timed })
  })
}
