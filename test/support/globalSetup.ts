import { Cause, Effect, Exit, Option, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { startEmbeddedPostgres } from "../../src/services/EmbeddedPostgres"
import { ensureBuilt } from "./builtService"

declare module "vitest" {
  export interface ProvidedContext {
    /** A superuser URL of the PostgreSQL server the integration tests share; each file makes its own database. */
    readonly adminDatabaseUrl: string
  }
}

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
    return
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
  return async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
