import { Migrator } from "@effect/sql"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { projectRoot } from "../projectRoot"

export const migrationsDirectory = path.join(projectRoot, "sql")

const fileName = /^(\d{4})_([a-z0-9_]+)\.sql$/

interface MigrationFile {
  readonly id: number
  readonly name: string
  readonly text: string
}

const readMigrationFiles = (directory: string): ReadonlyArray<MigrationFile> =>
  fs
    .readdirSync(directory)
    .flatMap((file) => {
      const match = fileName.exec(file)
      return match ? [{ id: Number(match[1]), name: match[2]!, text: fs.readFileSync(path.join(directory, file), "utf8") }] : []
    })
    .sort((a, b) => a.id - b.id)

/** Ids of the migrations shipped with this build, in order. */
export const migrationIds = (directory = migrationsDirectory): ReadonlyArray<number> =>
  readMigrationFiles(directory).map((file) => file.id)

/** Id of the newest migration shipped with this build: the database is ready when it has it. */
export const latestMigrationId = (directory = migrationsDirectory): number =>
  readMigrationFiles(directory).at(-1)?.id ?? 0

const loader = (directory: string): Migrator.Loader =>
  Effect.try({
    try: () =>
      readMigrationFiles(directory).map(({ id, name, text }): Migrator.ResolvedMigration => [
        id,
        name,
        // Each file runs whole, as one multi-statement text, inside the migrator's transaction.
        Effect.succeed(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text)))
      ]),
    catch: (cause) => new Migrator.MigrationError({ reason: "failed", message: `cannot read ${directory}`, cause })
  })

const lockKey = 727_274_001

/**
 * Applies the numbered files of sql/ once each. The migrator serialises runs by locking its table,
 * but it creates that table unguarded: instances that start together would race to create it. So
 * the table is created first, under an advisory lock, with the migrator's own definition.
 */
export const runMigrations = (directory = migrationsDirectory) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(
      Effect.zipRight(
        sql`SELECT pg_advisory_xact_lock(${lockKey})`,
        sql`CREATE TABLE IF NOT EXISTS effect_sql_migrations (
          migration_id integer primary key,
          created_at timestamp with time zone not null default now(),
          name text not null
        )`
      )
    )
    return yield* Migrator.make({})({ loader: loader(directory) })
  })
