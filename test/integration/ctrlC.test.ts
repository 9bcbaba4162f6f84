import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { tempDir } from "../support/tempDirs"
import { freePort, portFileOf } from "../../src/platform/EmbeddedPostgres"
import { waitForOk } from "../support/serviceProcess"

/**
 * Ctrl-C in a terminal (issue 25, finding 7): the terminal sends SIGINT to the whole foreground process
 * group of `npm start`, npm passes its own on, so the service gets it twice. Here `npm start` runs in a
 * process group of its own (as a terminal's job) and the group is sent SIGINT, as Ctrl-C does, three
 * starts in a row on one DATA_DIR. Each time: the `stopped` line, and no process of the group nor any
 * PostgreSQL of the DATA_DIR left. The embedded PostgreSQL keeps its port across the starts.
 */

const root = path.resolve(import.meta.dirname, "../..")
const started: Array<ChildProcess> = []
const dataDirs: Array<string> = []

afterAll(() => {
  // A group left behind by a failed run: SIGKILL to the group (npm's pid is its id).
  for (const child of started) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
    } catch {
      // Gone.
    }
  }
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true })
})

/** Processes whose process group is `group`, from /proc. */
const groupMembers = (group: number): ReadonlyArray<string> =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8")
      // Fields after the command: state, parent, process group.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return fields[0] !== "Z" && Number(fields[2]) === group ? [fs.readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ")] : []
    } catch {
      return []
    }
  })

/** PostgreSQL servers running on a cluster of this DATA_DIR. */
const postgresOf = (dataDir: string): ReadonlyArray<string> =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      const command = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ")
      return command.includes("postgres") && command.includes(dataDir) ? [command] : []
    } catch {
      return []
    }
  })

const npmStart = (env: Record<string, string>) => {
  const child = spawn("npm", ["start"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, as a terminal's job.
    detached: true
  })
  started.push(child)
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (chunk: Buffer) => void (stdout += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

const embeddedPort = (stdout: string): number | undefined => {
  const line = stdout.split("\n").find((text) => text.includes('"message":"embedded PostgreSQL started"'))
  return line === undefined ? undefined : Number((JSON.parse(line) as { annotations: { port: number } }).annotations.port)
}

describe("Ctrl-C on npm start", () => {
  it("stops cleanly every time, PostgreSQL included, and the embedded PostgreSQL keeps its port", async () => {
    const dataDir = tempDir("ws-ctrl-c-")
    dataDirs.push(dataDir)
    const port = String(await Effect.runPromise(freePort))
    const env = { DATA_DIR: dataDir, PORT: port, HOST: "127.0.0.1", ADMIN_TOKEN: "ctrl-c-admin-token-0123456789" }
    const ports: Array<number | undefined> = []
    const signalsIgnored: Array<number> = []
    for (let run = 1; run <= 3; run++) {
      const service = npmStart(env)
      await waitForOk(`http://127.0.0.1:${port}/readyz`)
      expect(postgresOf(dataDir).length).toBeGreaterThan(0)
      ports.push(embeddedPort(service.stdout()))
      process.kill(-service.child.pid!, "SIGINT")
      await service.exited
      // npm is gone; the service and its PostgreSQL must be too, and the service said so.
      const left = await untilEmpty(() => [...groupMembers(service.child.pid!), ...postgresOf(dataDir)])
      expect(left, `run ${run}`).toEqual([])
      expect(service.stdout(), `run ${run}`).toContain('"message":"stopped"')
      signalsIgnored.push(service.stdout().split("already shutting down: signal ignored").length - 1)
    }
    // How often the service got the signal again while stopping (npm passing its own on), for the record.
    console.log(JSON.stringify({ test: "Ctrl-C on npm start", ports, signalsIgnored }))
    expect(ports[0]).toBeGreaterThan(0)
    expect(ports).toEqual([ports[0], ports[0], ports[0]])
    expect(fs.readFileSync(portFileOf(path.join(dataDir, "postgres")), "utf8").trim()).toBe(String(ports[0]))
  }, 300_000)

  it("gives up a kept port another program took (saying so), and refuses a chosen port that is taken", async () => {
    const dataDir = tempDir("ws-pg-port-")
    dataDirs.push(dataDir)
    const port = String(await Effect.runPromise(freePort))
    const env = { DATA_DIR: dataDir, PORT: port, HOST: "127.0.0.1", ADMIN_TOKEN: "ctrl-c-admin-token-0123456789" }
    const portFile = portFileOf(path.join(dataDir, "postgres"))
    // Another program listens on the port kept from an earlier run.
    const squatter = net.createServer()
    const taken = await new Promise<number>((resolve) => squatter.listen(0, "127.0.0.1", () => resolve((squatter.address() as net.AddressInfo).port)))
    fs.writeFileSync(portFile, `${taken}\n`)
    try {
      const service = npmStart(env)
      await waitForOk(`http://127.0.0.1:${port}/readyz`)
      const used = embeddedPort(service.stdout())
      expect(used).not.toBe(taken)
      expect(service.stdout()).toContain("port kept in DATA_DIR is taken by another program")
      expect(fs.readFileSync(portFile, "utf8").trim()).toBe(String(used))
      process.kill(-service.child.pid!, "SIGINT")
      await service.exited
      expect(await untilEmpty(() => postgresOf(dataDir))).toEqual([])

      // Chosen with EMBEDDED_POSTGRES_PORT and taken: one line naming it, exit 1, nothing left.
      const refused = npmStart({ ...env, EMBEDDED_POSTGRES_PORT: String(taken) })
      expect(await refused.exited).not.toBe(0)
      expect(refused.stderr()).toContain(`EMBEDDED_POSTGRES_PORT ${taken} is in use on 127.0.0.1`)
      expect(postgresOf(dataDir)).toEqual([])
    } finally {
      await new Promise((resolve) => squatter.close(resolve))
    }
  }, 300_000)
})

/** Polls until the list is empty (processes take a moment to be reaped), or returns what is left after 10 s. */
const untilEmpty = async (list: () => ReadonlyArray<string>): Promise<ReadonlyArray<string>> => {
  const deadline = Date.now() + 10_000
  let left = list()
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    left = list()
  }
  return left
}
