import { ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { AppLive } from "../../src/appLayer"
import { AppConfig } from "../../src/config"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { eventually } from "../support/fakeUpstream"
import { type ServiceProcess, spawnService, waitForOk } from "../support/serviceProcess"

const made: Array<string> = []
const running: Array<ServiceProcess> = []

const tempDir = (prefix: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  made.push(dir)
  return dir
}

const start = (env: Record<string, string>): ServiceProcess => {
  const service = spawnService(env)
  running.push(service)
  return service
}

afterAll(async () => {
  for (const service of running) {
    if (service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill("SIGTERM")
      await service.exited
    }
  }
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true })
})

/** stderr without npm's own chatter. */
const errorLines = (service: ServiceProcess): Array<string> =>
  service.output().stderr.trim().split("\n").filter((line) => line !== "" && !line.startsWith("npm warn"))

const logLines = (service: ServiceProcess): Array<{ message: unknown; annotations: Record<string, unknown> }> =>
  service.output().stdout.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))

const port = () => Effect.runPromise(freePort)

describe("start-up checks: one plain line before anything is made", () => {
  it("refuses a port in use, a HOST not of this machine, a DATA_DIR that cannot be made, an unreachable database", async () => {
    const busy = net.createServer()
    const busyPort = await port()
    await new Promise<void>((resolve) => busy.listen(busyPort, "127.0.0.1", resolve))
    const unreachable = await port()
    // A database that accepts connections and never answers (a hung server, a black-holing proxy).
    const silent = net.createServer(() => {})
    const silentPort = await port()
    await new Promise<void>((resolve) => silent.listen(silentPort, "127.0.0.1", resolve))
    const parent = tempDir("ws-preflight-")
    const aFile = path.join(parent, "a-file")
    fs.writeFileSync(aFile, "")
    try {
      const cases: ReadonlyArray<readonly [Record<string, string>, RegExp]> = [
        [{ PORT: String(busyPort) }, new RegExp(`^PORT ${busyPort} is already in use on 127\\.0\\.0\\.1: .*set PORT`)],
        // TEST-NET-1: never an address of this machine.
        [{ HOST: "192.0.2.1" }, /^HOST 192\.0\.2\.1 is not an address of this machine: set HOST/],
        // A recursive mkdir under /proc never returns: this must fail at once (the test's timeout would catch a hang).
        [{ DATA_DIR: "/proc/workspace-api-data/x" }, /^DATA_DIR \/proc\/workspace-api-data\/x is not a writable folder and cannot be made one \(ENOENT\)/],
        [{ DATA_DIR: path.join(aFile, "data") }, /^DATA_DIR .*\/a-file\/data is not a writable folder .*\(ENOTDIR\)/],
        [
          { DATABASE_URL: `postgres://u:secret-pw@127.0.0.1:${unreachable}/db` },
          new RegExp(`^DATABASE_URL: cannot reach the database at 127\\.0\\.0\\.1:${unreachable}/db \\(.*ECONNREFUSED.*\\)`)
        ],
        [
          { DATABASE_URL: `postgres://u:secret-pw@127.0.0.1:${silentPort}/db`, DATABASE_ACQUIRE_TIMEOUT_MS: "1000" },
          new RegExp(`^DATABASE_URL: cannot reach the database at 127\\.0\\.0\\.1:${silentPort}/db \\(.*timed out.*\\)`)
        ]
      ]
      for (const [env, expected] of cases) {
        const dataDir = path.join(parent, `data-${Object.keys(env).join("")}`)
        const service = start({ HOST: "127.0.0.1", PORT: String(await port()), DATA_DIR: dataDir, ...env })
        expect(await service.exited, JSON.stringify(env)).toBe(1)
        const lines = errorLines(service)
        expect(lines, JSON.stringify(env)).toHaveLength(1)
        expect(lines[0]).toMatch(expected)
        expect(lines[0]).not.toContain("secret-pw")
        // Nothing was made: no cluster initialised, no admin token generated.
        if (env.DATA_DIR === undefined) expect(fs.existsSync(path.join(dataDir, "secrets.json"))).toBe(false)
        if (env.PORT !== undefined || env.HOST !== undefined) expect(fs.existsSync(dataDir)).toBe(false)
      }
    } finally {
      busy.close()
      silent.close()
    }
  }, 360_000)
})

describe("the embedded PostgreSQL across crashes", () => {
  it("starts again after a SIGKILL (stopping the orphaned server), refuses a second live instance, logs its shutdown", async () => {
    const dataDir = path.join(tempDir("ws-crash-"), "data")
    const env = { DATA_DIR: dataDir, HOST: "127.0.0.1", ADMIN_TOKEN: "crash-admin-token-0123456789" }
    const firstPort = await port()
    const first = start({ ...env, PORT: String(firstPort) })
    await waitForOk(`http://127.0.0.1:${firstPort}/readyz`)
    const started = logLines(first).find((line) => line.message === "embedded PostgreSQL started")
    const orphan = Number(started?.annotations.pid)
    expect(orphan).toBeGreaterThan(0)

    first.child.kill("SIGKILL")
    await first.exited
    // The server outlives a killed service: that is the orphan the next start must deal with.
    expect(() => process.kill(orphan, 0)).not.toThrow()

    const secondPort = await port()
    const second = start({ ...env, PORT: String(secondPort) })
    await waitForOk(`http://127.0.0.1:${secondPort}/readyz`)
    const recovered = logLines(second).filter((line) => String(line.message).startsWith("stopped the embedded PostgreSQL left running"))
    expect(recovered).toHaveLength(1)
    expect(recovered[0]?.annotations.pid).toBe(orphan)

    // A second live instance on the same DATA_DIR is refused with one line, and leaves the first alone.
    const third = start({ ...env, PORT: String(await port()) })
    expect(await third.exited).toBe(1)
    expect(errorLines(third)).toEqual([
      expect.stringMatching(new RegExp(`^another instance of the service \\(pid ${second.child.pid}\\) is running on this DATA_DIR \\(${dataDir}\\)`))
    ])
    expect((await fetch(`http://127.0.0.1:${secondPort}/readyz`)).status).toBe(200)

    second.child.kill("SIGTERM")
    expect(await second.exited).toBe(0)
    const messages = logLines(second).map((line) => line.message)
    expect(messages.slice(-2)).toEqual(["shutting down", "stopped"])
    expect(logLines(second).find((line) => line.message === "shutting down")?.annotations.signal).toBe("SIGTERM")
    expect(fs.existsSync(`${path.join(dataDir, "postgres")}.owner`)).toBe(false)
  }, 300_000)

  it("stops with status 1 and one line when its embedded PostgreSQL dies; LOG_FORMAT=pretty writes readable lines", async () => {
    const dataDir = path.join(tempDir("ws-died-"), "data")
    const servicePort = await port()
    const service = start({ DATA_DIR: dataDir, HOST: "127.0.0.1", PORT: String(servicePort), LOG_FORMAT: "pretty", ADMIN_TOKEN: "died-admin-token-0123456789" })
    await waitForOk(`http://127.0.0.1:${servicePort}/readyz`)
    const startedLine = service.output().stdout.split("\n").find((line) => line.includes(" embedded PostgreSQL started "))
    expect(startedLine).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z INFO {2}embedded PostgreSQL started (pid|port)=\d+ (pid|port)=\d+$/)
    const pid = Number(/pid=(\d+)/.exec(startedLine ?? "")?.[1])

    process.kill(pid, "SIGKILL")
    // Noticed at once and the stop does not hang on a server that is already gone.
    expect(await service.exited).toBe(1)
    expect(errorLines(service)).toEqual([
      expect.stringMatching(new RegExp(`^embedded PostgreSQL \\(pid ${pid}\\) exited unexpectedly \\(signal SIGKILL\\): the service stops$`))
    ])
    const stdout = service.output().stdout
    expect(stdout).toMatch(/ ERROR embedded PostgreSQL \(pid \d+\) exited unexpectedly/)
    expect(stdout).toMatch(/ INFO {2}stopped\n$/)
    expect(stdout.split("\n").filter((line) => line.startsWith("{"))).toEqual([])
  }, 300_000)

  it("answers /healthz 503 (and /readyz 503) once the embedded PostgreSQL it owns is gone", async () => {
    const dataDir = path.join(tempDir("ws-healthz-"), "data")
    const servicePort = await port()
    const env = { HOST: "127.0.0.1", PORT: String(servicePort), DATA_DIR: dataDir, ADMIN_TOKEN: "healthz-admin-token-0123456789" }
    // In process, without main: what the service answers between the death and its exit.
    const scope = Effect.runSync(Scope.make())
    await Effect.runPromise(Layer.buildWithScope(
      AppLive.pipe(
        Layer.provide(AppConfig.layer),
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
        Layer.provide(Logger.minimumLogLevel(LogLevel.None))
      ),
      scope
    ))
    try {
      const base = `http://127.0.0.1:${servicePort}`
      expect((await fetch(`${base}/healthz`)).status).toBe(200)
      const pid = Number(fs.readFileSync(path.join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0])
      process.kill(pid, "SIGKILL")
      expect(await eventually(async () => (await fetch(`${base}/healthz`)).status, (status) => status !== 200)).toBe(503)
      expect(await (await fetch(`${base}/healthz`)).json()).toEqual({
        status: "unavailable",
        reason: "the embedded PostgreSQL this service owns is not running"
      })
      expect((await fetch(`${base}/readyz`)).status).toBe(503)
    } finally {
      // The stop does not wait for the server that is already gone.
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 300_000)
})
