import { PgClient } from "@effect/sql-pg"
import { Cause, ConfigError, Data, Duration, Effect, Layer, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { type AppConfigShape, describeConfigError } from "./config"
import { databaseFailureReason } from "./platform/Database"

/** A start-up check that failed: its message is the one line the operator sees. */
export class StartupError extends Data.TaggedError("StartupError")<{ readonly message: string }> {}

const codeOf = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : cause instanceof Error ? cause.message : String(cause)

/** What a listen error means for the operator, naming the setting to change. */
const listenProblem = (host: string, port: number, code: string): string => {
  switch (code) {
    case "EADDRINUSE":
      return `PORT ${port} is already in use on ${host}: stop the program that listens there, or set PORT to a free port`
    case "EADDRNOTAVAIL":
      return `HOST ${host} is not an address of this machine: set HOST to one of its addresses (127.0.0.1, or 0.0.0.0 for all)`
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
      return `HOST ${host} cannot be resolved to an address: set HOST to an address or a known host name`
    case "EACCES":
      return `not allowed to listen on ${host}:${port} (ports below 1024 need privileges): set PORT to 1024 or above`
    default:
      return `cannot listen on ${host}:${port} (${code}): check HOST and PORT`
  }
}

/** Listens on HOST:PORT for a moment: a port in use or an address not ours fails here, before anything is made. */
const checkListen = (host: string, port: number): Effect.Effect<void, StartupError> =>
  Effect.async((resume) => {
    const server = net.createServer()
    server.once("error", (cause) => resume(Effect.fail(new StartupError({ message: listenProblem(host, port, codeOf(cause)) }))))
    server.listen({ host, port, exclusive: true }, () => server.close(() => resume(Effect.void)))
  })

/**
 * DATA_DIR exists (or is made) and takes a file. The folders are made one level at a time: a
 * recursive mkdir under /proc never returns (Node retries forever on ENOENT there).
 */
const checkDataDir = (dir: string): Effect.Effect<void, StartupError> =>
  Effect.try({
    try: () => {
      const missing: Array<string> = []
      let existing = dir
      while (!fs.existsSync(existing)) {
        missing.unshift(existing)
        const parent = path.dirname(existing)
        if (parent === existing) break
        existing = parent
      }
      if (!fs.statSync(existing).isDirectory()) throw Object.assign(new Error(`${existing} is not a folder`), { code: "ENOTDIR" })
      for (const folder of missing) fs.mkdirSync(folder, { mode: 0o755 })
      const probe = path.join(dir, `.write-test-${process.pid}`)
      fs.writeFileSync(probe, "")
      fs.rmSync(probe)
    },
    catch: (cause) =>
      new StartupError({
        message: `DATA_DIR ${dir} is not a writable folder and cannot be made one (${codeOf(cause)}): set DATA_DIR to a folder this user can write`
      })
  })

/** Where a database URL points, without its password. */
const describeUrl = (url: Redacted.Redacted): string => {
  try {
    const parsed = new URL(Redacted.value(url))
    return `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`
  } catch {
    return "the configured address"
  }
}

/** One connection and `SELECT 1` within the acquire timeout. */
const checkDatabase = (url: Redacted.Redacted, timeoutMs: number): Effect.Effect<void, StartupError> =>
  Layer.build(PgClient.layer({ url, maxConnections: 1, connectTimeout: Duration.millis(timeoutMs) })).pipe(
    Effect.scoped,
    Effect.mapError((error) =>
      new StartupError({
        message: `DATABASE_URL: cannot reach the database at ${describeUrl(url)} (${databaseFailureReason(error)}): check that it runs and that DATABASE_URL is right`
      })
    ),
    Effect.asVoid
  )

/**
 * The checks that can be made before anything is created (a cluster initialised, an admin token
 * generated): each failure is one line naming the setting.
 */
export const preflight = (config: AppConfigShape): Effect.Effect<void, StartupError> =>
  Effect.gen(function*() {
    yield* checkListen(config.host, config.port)
    // DATA_DIR holds the embedded cluster, generated secrets and local export files.
    const needsDataDir = Option.isNone(config.databaseUrl) || Option.isNone(config.adminToken) || config.exportStorage === "local"
    if (needsDataDir) yield* checkDataDir(config.dataDir)
    if (Option.isSome(config.databaseUrl)) yield* checkDatabase(config.databaseUrl.value, config.databaseTimeouts.acquireMs)
  })

const messageOf = (error: unknown): Option.Option<string> =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" && error.message !== ""
    ? Option.some(error.message)
    : Option.none()

/** The one plain line for a service that stops with this cause (None: stopped on request). */
export const describeFailure = (
  cause: Cause.Cause<unknown>,
  listen: { readonly host: string; readonly port: number }
): Option.Option<string> => {
  if (Cause.isInterruptedOnly(cause)) return Option.none()
  const line = Option.match(Cause.failureOption(cause), {
    onNone: () => `service stopped: ${Option.getOrElse(messageOf(Cause.squash(cause)), () => Cause.pretty(cause))}`,
    onSome: (error): string => {
      if (ConfigError.isConfigError(error)) return describeConfigError(error)
      if (typeof error === "object" && error !== null && "_tag" in error) {
        const inner = "cause" in error ? error.cause : undefined
        // The HTTP server could not listen after all (taken between the check and the start).
        if (error._tag === "ServeError") return listenProblem(listen.host, listen.port, codeOf(inner))
        if (error._tag === "SqlError") return `database: ${databaseFailureReason(error)}`
        const message = Option.getOrElse(messageOf(error), () => String(error._tag))
        const code = inner === undefined ? "" : codeOf(inner)
        return code === "" || message.includes(code) ? message : `${message} (${code})`
      }
      return `service stopped: ${String(error)}`
    }
  })
  // One line, whatever a message carried.
  return Option.some(line.replace(/\s*\n\s*/g, " "))
}
