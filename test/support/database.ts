import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Deferred, Effect, Fiber, Redacted } from "effect"
import * as crypto from "node:crypto"
import { inject } from "vitest"

/**
 * Creates a database with every migration applied on the shared test server, cloned from the run's
 * template (test/support/globalSetup.ts), and returns its URL.
 */
export const freshDatabaseUrl = (): Promise<string> => createDatabase(`TEMPLATE ${inject("templateDatabase")}`)

/** Creates an empty database (no migration applied) on the shared test server and returns its URL. */
export const emptyDatabaseUrl = (): Promise<string> => createDatabase("")

const createDatabase = (options: string): Promise<string> => {
  const admin = inject("adminDatabaseUrl")
  const name = `test_${crypto.randomBytes(6).toString("hex")}`
  return Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name} ${options}`)).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(admin), maxConnections: 1 })),
      Effect.scoped,
      Effect.as(withDatabase(admin, name))
    )
  )
}

const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** Runs one query against a database of the test server (for assertions on what the service stored). */
export const query = <Row extends object>(url: string, text: string, params: ReadonlyArray<unknown> = []): Promise<ReadonlyArray<Row>> =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Row>(text, params as Array<unknown>)).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
      Effect.scoped
    )
  )

/** Holds an exclusive lock on a table from another session until the returned release is called: a stalled table. */
export const holdTableLock = async (url: string, table: string): Promise<() => Promise<void>> => {
  const locked = Effect.runSync(Deferred.make<void>())
  const release = Effect.runSync(Deferred.make<void>())
  const fiber = Effect.runFork(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(
        sql.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`).pipe(
          Effect.zipRight(Deferred.succeed(locked, undefined)),
          Effect.zipRight(Deferred.await(release))
        )
      )).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.scoped)
  )
  await Effect.runPromise(Deferred.await(locked))
  return () => Effect.runPromise(Deferred.succeed(release, undefined).pipe(Effect.zipRight(Fiber.join(fiber)), Effect.asVoid))
}
