import { Effect } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { tempDir } from "../support/tempDirs"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { freshDatabaseUrl, holdTableLock, query } from "../support/database"
import { eventually } from "../support/fakeUpstream"
import { type ServiceProcess, spawnService, waitForOk } from "../support/serviceProcess"

/**
 * Waits that must end (issue 25, finding 6), against the built service as `npm start` runs it: a frozen
 * database, a shutdown with the ledger stalled, and one client holding sockets. The durations checked are
 * bounds far below the stall each test creates, not benchmarks.
 */

const adminToken = "bounded-waits-admin-token-0123456789"
const admin = { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }
const running: Array<ServiceProcess> = []
const dataDirs: Array<string> = []

// A service a failed test left running is stopped as a user would, so that its PostgreSQL stops too.
afterAll(async () => {
  for (const service of running) {
    if (service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill("SIGTERM")
      const killLater = setTimeout(() => service.child.kill("SIGKILL"), 60_000)
      await service.exited
      clearTimeout(killLater)
    }
  }
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true })
})

const start = async (env: Record<string, string>) => {
  const port = await Effect.runPromise(freePort)
  const base = `http://127.0.0.1:${port}`
  const fullEnv = {
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: tempDir("ws-bounded-"),
    ADMIN_TOKEN: adminToken,
    ...env
  }
  dataDirs.push(fullEnv.DATA_DIR)
  const service = spawnService(fullEnv)
  running.push(service)
  await waitForOk(`${base}/readyz`)
  return { service, base, env: fullEnv }
}

const post = (url: string, body: unknown, headers: Record<string, string> = admin) =>
  fetch(url, { method: "POST", headers, body: JSON.stringify(body) })

const workspaceWithKeys = async (base: string) => {
  const workspace = await (await post(`${base}/admin/workspaces`, { name: "w" })).json() as { id: string }
  const keyOf = async (scopes: Array<string>) =>
    ((await (await post(`${base}/admin/workspaces/${workspace.id}/api-keys`, { name: "k", scopes })).json()) as { key: string }).key
  return { workspaceId: workspace.id, completion: await keyOf(["COMPLETION_API"]), exports: await keyOf(["USAGE_EXPORT_API"]) }
}

const chat = (base: string, key: string, content = "hello") =>
  post(`${base}/provider_a/eu/v1/chat/completions`, { model: "chatgen-4o", messages: [{ role: "user", content }], max_tokens: 16 }, {
    authorization: `Bearer ${key}`,
    "content-type": "application/json"
  })

/** The JSON log lines of a service whose message is `message`. */
const logLines = (service: ServiceProcess, message: string) =>
  service.output().stdout.split("\n").filter((line) => line.includes(`"message":"${message}"`)).map((line) =>
    JSON.parse(line) as { annotations: Record<string, unknown> }
  )

const journalLines = (dataDir: string) => {
  const journal = path.join(dataDir, "usage-journal")
  return fs.readdirSync(journal).filter((name) => name.endsWith(".jsonl")).flatMap((name) =>
    fs.readFileSync(path.join(journal, name), "utf8").split("\n").filter((line) => line.length > 0)
  ).length
}

/** A PostgreSQL server's processes: the postmaster and its children, read from /proc. */
const serverProcesses = (postmaster: number): ReadonlyArray<number> => [
  postmaster,
  ...fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8")
      // Field 4 (the parent), after the command name in parentheses.
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === postmaster ? [Number(name)] : []
    } catch {
      return []
    }
  })
]

/** An answer's status and how long it took; status 0 when none came within 30 s (the freeze's own end would be later). */
const timed = async (request: (signal: AbortSignal) => Promise<Response>) => {
  const started = Date.now()
  try {
    const answer = await request(AbortSignal.timeout(30_000))
    await answer.text()
    return { status: answer.status, ms: Date.now() - started }
  } catch {
    return { status: 0, ms: Date.now() - started }
  }
}

describe("bounded waits", () => {
  it("answers 503 within the statement timeout and a second while its own embedded PostgreSQL is frozen (SIGSTOP), then recovers", async () => {
    const statementMs = 2_000
    const { base, service } = await start({ DATABASE_STATEMENT_TIMEOUT_MS: String(statementMs), DATABASE_ACQUIRE_TIMEOUT_MS: "1000" })
    const { exports } = await workspaceWithKeys(base)
    const pid = Number(logLines(service, "embedded PostgreSQL started")[0]?.annotations.pid)
    expect(pid).toBeGreaterThan(0)
    const readWorkspaces = (signal?: AbortSignal) => fetch(`${base}/admin/workspaces?limit=5`, { headers: admin, ...(signal ? { signal } : {}) })
    const exportUsers = (signal: AbortSignal) =>
      fetch(`${base}/export/users`, {
        method: "POST",
        headers: { authorization: `Bearer ${exports}`, "content-type": "application/json" },
        body: JSON.stringify({ from: { date: "2026-01-05T00:00:00", timezone: "UTC" }, to: { date: "2026-01-07T00:00:00", timezone: "UTC" } }),
        signal
      })
    // Connections in the pool, idle: the requests below take them and send their queries to a frozen server.
    await Promise.all(Array.from({ length: 12 }, () => readWorkspaces()))

    // The whole server: the postmaster (no new connection is served) and every process it started,
    // each connection's backend included (each in a session of its own, so signalled one by one).
    const frozen = serverProcesses(pid)
    for (const each of frozen) process.kill(each, "SIGSTOP")
    try {
      // Held well past the bound: a wait that only the freeze's end would release fails the test.
      const answers = await Promise.all([
        ...Array.from({ length: 8 }, () => timed(readWorkspaces)),
        ...Array.from({ length: 2 }, () => timed(exportUsers))
      ])
      console.log(JSON.stringify({ test: "frozen database", answers }))
      for (const answer of answers) {
        expect(answer.status).toBe(503)
        // The statement timeout and a second, plus room for a loaded machine: the freeze lasts until all are answered.
        expect(answer.ms).toBeLessThan(statementMs + 1_000 + 2_000)
      }
      expect(logLines(service, "database unavailable: answered 503").map((line) => line.annotations.reason)).toContainEqual(
        expect.stringContaining("connection closed")
      )
    } finally {
      for (const each of frozen) process.kill(each, "SIGCONT")
    }
    // The closed connections were dropped: the service answers again.
    const back = await eventually(() => readWorkspaces().then((answer) => answer.status), (status) => status === 200, 15_000)
    expect(back).toBe(200)
    service.child.kill("SIGTERM")
    expect(await service.exited).toBe(0)
  }, 180_000)

  it("SIGTERM with the ledger stalled exits 0 within seconds, saying how many records wait in the journal; the next start writes them", async () => {
    const databaseUrl = await freshDatabaseUrl()
    const { base, service, env } = await start({ DATABASE_URL: databaseUrl })
    const { completion, workspaceId } = await workspaceWithKeys(base)
    const release = await holdTableLock(databaseUrl, "api_requests")
    let stopped = false
    try {
      const answered = await Promise.all(Array.from({ length: 20 }, (_, i) => chat(base, completion, `request ${i}`)))
      expect(answered.map((answer) => answer.status)).toEqual(answered.map(() => 200))
      const requestIds = answered.map((answer) => answer.headers.get("x-request-id")!)
      // Answered, so in the journal (the periodic write to the ledger waits on the lock).
      expect(journalLines(env.DATA_DIR)).toBe(20)
      const signalled = Date.now()
      service.child.kill("SIGTERM")
      expect(await service.exited).toBe(0)
      stopped = true
      const tookMs = Date.now() - signalled
      const [left] = logLines(service, "usage records not written to the ledger at shutdown: they wait in the journal for the next start")
      console.log(JSON.stringify({ test: "SIGTERM, ledger stalled", tookMs, left: left?.annotations }))
      // Before: 101.7 s with no line. Now the drain (nothing in flight), five seconds of flush, the pool and the exit.
      expect(tookMs).toBeLessThan(20_000)
      expect(left?.annotations).toMatchObject({ journaled: 20, lostInMemoryOnly: 0 })
      expect(service.output().stdout).toContain('"message":"stopped"')

      await release()
      const next = spawnService(env)
      running.push(next)
      await waitForOk(`${base}/readyz`)
      const rows = await eventually(
        () => query<{ request_id: string }>(databaseUrl, "SELECT request_id FROM api_requests WHERE workspace_id = $1", [workspaceId]),
        (found) => found.length >= requestIds.length
      )
      expect(rows.map((row) => row.request_id).sort()).toEqual([...requestIds].sort())
      next.child.kill("SIGTERM")
      expect(await next.exited).toBe(0)
    } finally {
      if (!stopped) await release()
    }
  }, 180_000)

  it("one address holding 4,096 silent sockets refuses no other client, and its silent sockets are closed", async () => {
    const { base, service } = await start({ DATABASE_URL: await freshDatabaseUrl(), SERVER_FIRST_BYTE_TIMEOUT_MS: "3000" })
    const port = Number(new URL(base).port)
    const sockets: Array<net.Socket> = []
    let closed = 0
    const open = () =>
      new Promise<void>((resolve) => {
        const socket = net.connect({ port, host: "127.0.0.1" })
        socket.on("error", () => {})
        socket.once("connect", () => resolve())
        socket.once("close", () => {
          closed += 1
          resolve()
        })
        sockets.push(socket)
      })
    try {
      // As fast as they can be opened, in batches the kernel's backlog takes.
      for (let i = 0; i < 4_096; i += 512) await Promise.all(Array.from({ length: 512 }, open))
      // Another client, from another loopback address.
      const other = await new Promise<string>((resolve, reject) => {
        const socket = net.connect({ port, host: "127.0.0.1", localAddress: "127.0.0.2" }, () =>
          socket.end("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        let text = ""
        socket.on("data", (chunk) => void (text += chunk.toString()))
        socket.once("close", () => resolve(text))
        socket.once("error", reject)
      })
      expect(other).toMatch(/^HTTP\/1\.1 200/)
      console.log(JSON.stringify({ test: "4,096 sockets from one address", refusedAtOnce: closed }))
      // Beyond the per-address limit (256) they were refused as they came.
      expect(closed).toBeGreaterThanOrEqual(4_096 - 256)
      // The rest never sent a byte: closed after the first-byte timeout, long before the 10 s headers timeout.
      await eventually(() => closed, (count) => count === 4_096, 9_000)
    } finally {
      for (const socket of sockets) socket.destroy()
    }
    service.child.kill("SIGTERM")
    expect(await service.exited).toBe(0)
  }, 120_000)
})
