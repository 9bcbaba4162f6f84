import { Effect, Exit, Redacted, Scope } from "effect"
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

/**
 * Builds dist/ (the tests that spawn the service or the CLI run the built files, as `npm start` does), then
 * provides one PostgreSQL server for the whole run: DATABASE_URL when set, else an embedded throw-away cluster.
 */
export default async function setup(project: TestProject) {
  ensureBuilt()
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
