import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import * as path from "node:path"
import * as Pg from "pg"
import { AppConfig } from "../config"
import { Metrics } from "./Metrics"
import { EmbeddedPostgresFailure, startEmbeddedPostgres } from "./EmbeddedPostgres"
import { LocalSecrets } from "./LocalSecrets"
import { runMigrations } from "./Migrations"
import { armQueryDeadlines, queryDeadlineMarginMs } from "./queryDeadline"


/** Whether the database the service owns is there. With DATABASE_URL nothing is owned: always alive. */
export class DatabaseHealth extends Context.Tag("DatabaseHealth")<DatabaseHealth, {
  readonly alive: Effect.Effect<boolean>
  /** Fails as soon as the owned database dies; never completes otherwise. */
  readonly lost: Effect.Effect<never, EmbeddedPostgresFailure>
}>() {
  static readonly external = Layer.succeed(DatabaseHealth, { alive: Effect.succeed(true), lost: Effect.never })
}

/**
 * The statement timeout goes to the server with each connection (it cancels the statement there; a
 * client-side deadline just past it closes a connection whose server does not answer at all, see
 * queryDeadline.ts); the acquire timeout is the pool's wait for a connection, a new one's connect included.
 */
const withStatementTimeout = (url: Redacted.Redacted, statementMs: number): Redacted.Redacted => {
  const parsed = new URL(Redacted.value(url))
  parsed.searchParams.set("statement_timeout", String(statementMs))
  return Redacted.make(parsed.toString())
}

const messageOf = (cause: unknown): string =>
  cause instanceof Error ? cause.message : typeof cause === "object" && cause !== null && "message" in cause ? String(cause.message) : String(cause)

/** What went wrong with the database, in a few words, from a SqlError (or its cause). */
export const databaseFailureReason = (error: unknown): string => {
  const cause = typeof error === "object" && error !== null && "cause" in error ? error.cause : error
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : ""
  const message = messageOf(cause)
  if (code === "57014") return "statement timeout (DATABASE_STATEMENT_TIMEOUT_MS)"
  if (code === "query_deadline_passed") return "no answer within DATABASE_STATEMENT_TIMEOUT_MS: connection closed (database frozen or unreachable)"
  if (/timeout exceeded when trying to connect/i.test(message)) return "no connection within DATABASE_ACQUIRE_TIMEOUT_MS"
  // The driver's own connect timer and ours have the same length: whichever fires first, one wording.
  if (/connection terminated due to connection timeout/i.test(message)) return "Connection timed out"
  return code !== "" && !message.includes(code) ? `${code}: ${message}` : message
}

/** The log line of a request answered 503 because of the database. */
export const logDatabaseUnavailable = (error: unknown) =>
  Effect.logWarning("database unavailable: answered 503").pipe(Effect.annotateLogs({ reason: databaseFailureReason(error) }))

/**
 * The connection pool, made here rather than by PgClient.layer (with the same settings and start-up
 * check) so that /metrics can read its use: connections busy and idle, and requests waiting for one.
 */
const pooled = (url: Redacted.Redacted, timeouts: { readonly acquireMs: number; readonly statementMs: number }, metrics: typeof Metrics.Service) =>
  Effect.gen(function*() {
    const { acquireMs, statementMs } = timeouts
    const pool = new Pg.Pool({
      connectionString: Redacted.value(url),
      connectionTimeoutMillis: acquireMs,
      max: maxConnections,
      application_name: "workspace-api"
    })
    // A connection that breaks while idle is dropped by the pool; each query reports its own failures.
    pool.on("error", () => {})
    armQueryDeadlines(pool, statementMs + queryDeadlineMarginMs)
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }),
      () => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    ).pipe(
      Effect.timeoutFail({
        duration: acquireMs,
        onTimeout: () => new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
      })
    )
    yield* metrics.gauge("wsapi_db_pool_connections", "Database connections of the pool, by state (busy or idle).", () => [
      { labels: { state: "busy" }, value: pool.totalCount - pool.idleCount },
      { labels: { state: "idle" }, value: pool.idleCount }
    ])
    yield* metrics.gauge("wsapi_db_pool_waiting", "Requests waiting for a database connection.", () => pool.waitingCount)
    yield* metrics.gauge("wsapi_db_pool_max", "Most connections the pool opens.", () => maxConnections)
    return pool
  })

const maxConnections = 20

/**
 * The one database: DATABASE_URL when set, otherwise an embedded PostgreSQL in DATA_DIR/postgres
 * that lives as long as this layer and is watched: its death is logged at once and `lost` fails, so
 * the service stops (exit status 1) and its supervisor starts it again. Migrations are applied
 * before the layer is ready.
 */
export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const timeouts = config.databaseTimeouts
    const metrics = yield* Metrics
    const client = (url: Redacted.Redacted) =>
      Layer.effectDiscard(runMigrations()).pipe(
        Layer.provideMerge(PgClient.layerFromPool({ acquire: pooled(withStatementTimeout(url, timeouts.statementMs), timeouts, metrics) }))
      )
    if (Option.isSome(config.databaseUrl)) return Layer.merge(client(config.databaseUrl.value), DatabaseHealth.external)
    const password = yield* Effect.flatMap(LocalSecrets, (secrets) => secrets.postgresPassword)
    const server = yield* startEmbeddedPostgres({
      directory: path.join(config.dataDir, "postgres"),
      password,
      keepPort: { fixed: config.embeddedPostgresPort }
    })
    yield* Effect.logInfo("embedded PostgreSQL started").pipe(Effect.annotateLogs({ port: server.port, pid: server.pid }))
    const lost = server.died.pipe(
      Effect.map((why) => new EmbeddedPostgresFailure({ message: `embedded PostgreSQL (pid ${server.pid}) exited unexpectedly (${why}): the service stops` }))
    )
    // Noticed and logged at once, whoever waits on `lost`.
    yield* Effect.forkScoped(lost.pipe(Effect.flatMap((error) => Effect.logError(error.message))))
    return Layer.merge(
      client(server.url),
      Layer.succeed(DatabaseHealth, { alive: server.running, lost: Effect.flatMap(lost, Effect.fail) })
    )
  })
)
