import { Effect, Exit, Redacted, Scope } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { startEmbeddedPostgres } from "../../src/services/EmbeddedPostgres"

declare module "vitest" {
  export interface ProvidedContext {
    /** A superuser URL of the PostgreSQL server the integration tests share; each file makes its own database. */
    readonly adminDatabaseUrl: string
  }
}

const root = path.resolve(import.meta.dirname, "../..")

/**
 * The tests that spawn the service or the CLI run the built files, as `npm start` does: build them once
 * here (only when stale). A failure stops the run with the build's own messages.
 */
const buildOnce = (): void => {
  const built = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: root, encoding: "utf8" })
  if (built.status !== 0) {
    throw new Error(`node scripts/build.mjs failed (exit ${built.status ?? built.signal}):\n${built.stderr}${built.stdout}`)
  }
}

/**
 * Builds dist/, then provides one PostgreSQL server for the whole run: DATABASE_URL when set, else an
 * embedded throw-away cluster.
 */
export default async function setup(project: TestProject) {
  buildOnce()
  const fromEnv = process.env.DATABASE_URL
  if (fromEnv) {
    project.provide("adminDatabaseUrl", fromEnv)
    return
  }
  const scope = Effect.runSync(Scope.make())
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "workspace-api-test-pg-"))
  fs.rmSync(directory, { recursive: true })
  const { url } = await Effect.runPromise(
    startEmbeddedPostgres({
      directory,
      password: Redacted.make("test-password"),
      deleteOnStop: true,
      // A throw-away cluster: durability off, room for many test pools.
      settings: { fsync: "off", synchronous_commit: "off", full_page_writes: "off", max_connections: "400" }
    }).pipe(Scope.extend(scope))
  )
  project.provide("adminDatabaseUrl", Redacted.value(url))
  return async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
