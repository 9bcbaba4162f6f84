import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Exit, Option, Redacted, Scope } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { startEmbeddedPostgres } from "../../src/platform/EmbeddedPostgres"
import { runMigrations } from "../../src/platform/Migrations"
import { ensureBuilt } from "./builtService"

declare module "vitest" {
  export interface ProvidedContext {
    /** A superuser URL of the PostgreSQL server the integration tests share; each file makes its own database. */
    readonly adminDatabaseUrl: string
    /** A database with every migration applied, which `freshDatabaseUrl` clones for each test that asks. */
    readonly templateDatabase: string
  }
}

const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

const onServer = (url: string, statement: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
    Effect.scoped
  )

/**
 * The migrations applied once a run, to a template that each test's database is cloned from (a copy of its
 * files: milliseconds), instead of once a test database (the seventeen files, a second or more under load).
 * Closed to connections afterwards: PostgreSQL copies a template only while nobody is connected to it.
 */
const makeTemplate = (adminUrl: string) =>
  Effect.gen(function*() {
    const name = `test_template_${crypto.randomBytes(6).toString("hex")}`
    yield* onServer(adminUrl, `CREATE DATABASE ${name}`)
    yield* Effect.scoped(
      runMigrations().pipe(Effect.provide(PgClient.layer({ url: Redacted.make(withDatabase(adminUrl, name)), maxConnections: 1 })))
    )
    yield* onServer(adminUrl, `ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`)
    return name
  })

/** The template of a run on a server it does not own (DATABASE_URL): dropped at the end. */
const dropTemplate = (adminUrl: string, name: string) =>
  Effect.zipRight(
    onServer(adminUrl, `ALTER DATABASE ${name} WITH IS_TEMPLATE false`),
    onServer(adminUrl, `DROP DATABASE IF EXISTS ${name}`)
  ).pipe(Effect.ignore)

/** Why the set-up failed, on one line: the failure's own message, else the cause as Effect prints it. */
const reasonOf = (cause: Cause.Cause<unknown>): string => {
  const error = Option.getOrElse(Cause.failureOption(cause), () => Cause.squash(cause))
  const message = typeof error === "object" && error !== null && "message" in error ? String(error.message) : Cause.pretty(cause)
  return message.replace(/\s*\n\s*/g, " ")
}

/** The shared throw-away cluster in a fresh folder under the temporary folder, alive as long as `scope`. */
const startCluster = (scope: Scope.Scope) =>
  Effect.gen(function*() {
    const parent = yield* Effect.try({
      try: () => fs.mkdtempSync(path.join(os.tmpdir(), "workspace-api-test-pg-")),
      catch: (cause) => new Error(`cannot make a folder under ${os.tmpdir()} (${cause instanceof Error ? cause.message : String(cause)})`)
    })
    // Added before the server starts, so it runs after the server stopped.
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(parent, { recursive: true, force: true })))
    return yield* startEmbeddedPostgres({
      directory: path.join(parent, "cluster"),
      password: Redacted.make("test-password"),
      deleteOnStop: true,
      // A throw-away cluster: durability off, room for many test pools.
      settings: { fsync: "off", synchronous_commit: "off", full_page_writes: "off", max_connections: "400" }
    })
  }).pipe(Scope.extend(scope))

/**
 * The run's own temporary folder, made TMPDIR for the test files (vitest's workers are started after the
 * set-up and inherit it): every folder a test makes under os.tmpdir() lands there, so the end of the run
 * finds what a test left behind without mistaking another run's folders (runs share /tmp) for this one's.
 * Passable by every user like /tmp, for the embedded PostgreSQL's postgres user. None when it cannot be made.
 */
const useRunTempDir = (): { readonly dir: string; readonly previous: string | undefined } | undefined => {
  try {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workspace-api-test-run-"))
    fs.chmodSync(dir, 0o1777)
    const previous = process.env.TMPDIR
    process.env.TMPDIR = dir
    return { dir, previous }
  } catch {
    return undefined
  }
}

/** Kept on purpose under the temporary folder: the embedded PostgreSQL's copy of its binaries (src/platform/EmbeddedPostgres.ts). */
const keptByDesign = (name: string): boolean => name.startsWith("workspace-api-postgres-bin-")

/**
 * Once every test file has run: what is left in the run's temporary folder is a test that does not clean up
 * (test/support/tempDirs.ts removes what tempDir() made). It is named on stderr, the folder removed, and
 * the run fails, so that the leak is fixed rather than piling up in /tmp. A folder something is still
 * mounted on (an embedded cluster's binding) is left alone and named.
 */
const checkRunTempDir = (run: ReturnType<typeof useRunTempDir>) => {
  if (run === undefined) return
  if (run.previous === undefined) delete process.env.TMPDIR
  else process.env.TMPDIR = run.previous
  const left = fs.readdirSync(run.dir).filter((name) => !keptByDesign(name))
  const mounted = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").some((line) => (line.split(" ")[4] ?? "").startsWith(`${run.dir}/`))
  if (!mounted) fs.rmSync(run.dir, { recursive: true, force: true, maxRetries: 3 })
  if (left.length === 0 && !mounted) return
  const byPrefix = new Map<string, number>()
  for (const name of left) {
    const prefix = name.replace(/[A-Za-z0-9]{6}$/, "")
    byPrefix.set(prefix, (byPrefix.get(prefix) ?? 0) + 1)
  }
  const line = mounted
    ? `tests left a mount under ${run.dir} (left in place): ${left.join(", ")}`
    : `tests left temporary folders behind (removed now; make them with tempDir() of test/support/tempDirs.ts): ${
      [...byPrefix].map(([prefix, count]) => `${prefix}* ×${count}`).join(", ")
    }`
  process.stderr.write(`${line}\n`)
  throw new Error(line)
}

/** The migrated template, or the set-up's one-line failure (the embedded cluster, when given, stopped first). */
const templateOrStop = async (adminUrl: string, scope?: Scope.CloseableScope): Promise<string> => {
  const made = await Effect.runPromiseExit(makeTemplate(adminUrl))
  if (Exit.isSuccess(made)) return made.value
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, made))
  const line = `test set-up failed: the migrated template database was not made: ${reasonOf(made.cause)}`
  process.stderr.write(`${line}\n`)
  throw new Error(line)
}

/**
 * Builds dist/ (the tests that spawn the service or the CLI run the built files, as `npm start` does), then
 * provides one PostgreSQL server for the whole run: DATABASE_URL when set, else an embedded throw-away cluster.
 * Vitest reports an error thrown here with nothing but its RUN banner and exit status 1, so a
 * failure is also written to stderr here, with its cause, and what was started is undone.
 */
export default async function setup(project: Pick<TestProject, "provide">) {
  try {
    ensureBuilt()
  } catch (error) {
    process.stderr.write(`test set-up failed: ${error instanceof Error ? error.message : String(error)}\n`)
    throw error
  }
  const fromEnv = process.env.DATABASE_URL
  if (fromEnv) {
    project.provide("adminDatabaseUrl", fromEnv)
    const template = await templateOrStop(fromEnv)
    project.provide("templateDatabase", template)
    const run = useRunTempDir()
    return async () => {
      await Effect.runPromise(dropTemplate(fromEnv, template))
      checkRunTempDir(run)
    }
  }
  const scope = Effect.runSync(Scope.make())
  const started = await Effect.runPromiseExit(startCluster(scope))
  if (Exit.isFailure(started)) {
    await Effect.runPromise(Scope.close(scope, started))
    const line = `test set-up failed: the shared PostgreSQL of the tests did not start: ${reasonOf(started.cause)}`
    process.stderr.write(`${line}\n`)
    throw new Error(line)
  }
  project.provide("adminDatabaseUrl", Redacted.value(started.value.url))
  project.provide("templateDatabase", await templateOrStop(Redacted.value(started.value.url), scope))
  // After the shared cluster started (it stays in the machine's temporary folder, with its own clean-up).
  const run = useRunTempDir()
  return async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    checkRunTempDir(run)
  }
}
