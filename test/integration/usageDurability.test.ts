import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { freshDatabaseUrl, holdTableLock, query } from "../support/database"
import { eventually } from "../support/fakeUpstream"
import { type ServiceProcess, spawnService, waitForOk } from "../support/serviceProcess"
import { tempDir } from "../support/tempDirs"

/**
 * The usage ledger against the service's own process dying: killed (SIGKILL) or stopped (SIGTERM)
 * while clients keep it busy through the built-in simulator, then started again on the same
 * DATA_DIR and database. No timed assertions: every figure is counted, not clocked, and the load runs
 * until a count of answers, not for a time.
 */

const adminToken = "durability-admin-token-0123456789"
const admin = { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }

interface Service {
  readonly base: string
  readonly env: Record<string, string>
  readonly databaseUrl: string
}

const prepare = async (): Promise<Service> => {
  const port = String(await Effect.runPromise(freePort))
  const databaseUrl = await freshDatabaseUrl()
  const env = {
    DATA_DIR: tempDir("ws-durability-"),
    PORT: port,
    HOST: "127.0.0.1",
    ADMIN_TOKEN: adminToken,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: "warning"
  }
  return { base: `http://127.0.0.1:${port}`, env, databaseUrl }
}

const start = async (service: Service): Promise<ServiceProcess> => {
  const running = spawnService(service.env)
  await waitForOk(`${service.base}/readyz`, 90_000)
  return running
}

/** A workspace whose limits no test load reaches, and a key of it. */
const workspaceWithKey = async (base: string) => {
  const workspace = await (await fetch(`${base}/admin/workspaces`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({
      name: "Load",
      settings: { rateLimits: { families: { chat_completions: { requestsPerMinute: 10_000_000, tokensPerMinute: 1_000_000_000 } } } }
    })
  })).json() as { id: string }
  const key = await (await fetch(`${base}/admin/workspaces/${workspace.id}/api-keys`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ name: "load", scopes: ["COMPLETION_API"] })
  })).json() as { key: string }
  return { workspaceId: workspace.id, key: key.key }
}

interface Completed {
  readonly requestId: string
  /** When the client had read the whole answer (ms since the epoch). */
  readonly at: number
}

/** `concurrency` clients sending chat completions one after another until `stop()`. */
const load = (base: string, key: string, concurrency: number, content = "hello") => {
  const completed: Array<Completed> = []
  let running = true
  let sent = 0
  const worker = async () => {
    while (running) {
      sent++
      try {
        const answer = await fetch(`${base}/provider_a/eu/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content }], max_tokens: 16 })
        })
        await answer.text()
        if (answer.status === 200) completed.push({ requestId: answer.headers.get("x-request-id")!, at: Date.now() })
      } catch {
        // The service went away: the request did not complete.
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
  }
  const workers = Array.from({ length: concurrency }, worker)
  return {
    completed,
    sent: () => sent,
    stop: async () => {
      running = false
      await Promise.all(workers)
    }
  }
}

const ledgerCounts = async (databaseUrl: string) => {
  const rows = await query<{ request_id: string; n: number }>(
    databaseUrl,
    "SELECT request_id, count(*)::int AS n FROM api_requests GROUP BY request_id"
  )
  return new Map(rows.map((r) => [r.request_id, r.n]))
}

/** Polls the ledger until every given request has a row (or the timeout passes), then returns the counts. */
const ledgerOnce = async (databaseUrl: string, requestIds: ReadonlyArray<string>, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  let counts = await ledgerCounts(databaseUrl)
  while (requestIds.some((id) => !counts.has(id)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    counts = await ledgerCounts(databaseUrl)
  }
  return counts
}

/** Waits until the clients have had `count` answers: load enough, however fast this machine is today. */
const untilAnswered = (clients: { readonly completed: ReadonlyArray<Completed> }, count: number) =>
  eventually(() => clients.completed.length, (n) => n >= count, 60_000)

const journalFiles = (dataDir: string) => fs.readdirSync(path.join(dataDir, "usage-journal")).filter((f) => f.endsWith(".jsonl"))

/** Every given request has its line in the journal (written just after the answer, off the request path). */
const journaled = (dataDir: string, requestIds: ReadonlyArray<string>) =>
  eventually(
    () => {
      const text = journalFiles(dataDir).map((f) => fs.readFileSync(path.join(dataDir, "usage-journal", f), "utf8")).join("")
      return requestIds.filter((id) => !text.includes(`"${id}"`)).length
    },
    (missing) => missing === 0,
    30_000
  )

describe("usage records and the service's process", () => {
  it("SIGKILL under load loses no record of a request that finished more than 100 ms before it", async () => {
    const service = await prepare()
    const first = await start(service)
    const { key } = await workspaceWithKey(service.base)
    const clients = load(service.base, key, 16)
    const loadStarted = Date.now()
    await untilAnswered(clients, 200)
    const killedAt = Date.now()
    first.child.kill("SIGKILL")
    await first.exited
    await clients.stop()
    const seconds = (killedAt - loadStarted) / 1000

    const second = await start(service)
    const due = clients.completed.filter((c) => c.at < killedAt - 100).map((c) => c.requestId)
    const counts = await ledgerOnce(service.databaseUrl, due)
    const recorded = due.filter((id) => counts.get(id) === 1).length
    const doubled = [...counts.values()].filter((n) => n > 1).length
    console.log(JSON.stringify({
      test: "SIGKILL under load",
      requestsPerSecond: Math.round(clients.completed.length / seconds),
      completed: clients.completed.length,
      completedMoreThan100msBeforeKill: due.length,
      recorded,
      lost: due.length - recorded,
      duplicated: doubled
    }))
    expect(due.length).toBeGreaterThan(50)
    expect(due.length - recorded).toBe(0)
    expect(doubled).toBe(0)
    // The journal is emptied once its records are in the ledger.
    await eventually(() => journalFiles(service.env.DATA_DIR!).length, (n) => n <= 1, 30_000)
    second.child.kill("SIGTERM")
    expect(await second.exited).toBe(0)
    expect(journalFiles(service.env.DATA_DIR!)).toEqual([])
  }, 360_000)

  it("SIGTERM under load writes every record once: no duplicate, none missing", async () => {
    const service = await prepare()
    const first = await start(service)
    const { key } = await workspaceWithKey(service.base)
    const clients = load(service.base, key, 16)
    const loadStarted = Date.now()
    await untilAnswered(clients, 200)
    const stoppedAt = Date.now()
    first.child.kill("SIGTERM")
    expect(await first.exited).toBe(0)
    await clients.stop()
    // Nothing is left for a next start: the ledger is complete as the process exits.
    const counts = await ledgerCounts(service.databaseUrl)
    const completed = clients.completed.map((c) => c.requestId)
    const recorded = completed.filter((id) => counts.has(id)).length
    const doubled = [...counts.values()].filter((n) => n > 1).length
    console.log(JSON.stringify({
      test: "SIGTERM under load",
      requestsPerSecond: Math.round(clients.completed.length / ((stoppedAt - loadStarted) / 1000)),
      completed: completed.length,
      recorded,
      rows: [...counts.values()].reduce((a, b) => a + b, 0),
      duplicated: doubled
    }))
    expect(completed.length).toBeGreaterThan(50)
    expect(recorded).toBe(completed.length)
    expect(doubled).toBe(0)
    expect(fs.readdirSync(path.join(service.env.DATA_DIR!, "usage-journal")).filter((f) => f.endsWith(".jsonl"))).toEqual([])
  }, 360_000)

  it("a long database outage followed by a crash loses nothing", async () => {
    const service = await prepare()
    const first = await start(service)
    const { key } = await workspaceWithKey(service.base)
    // The ledger stops accepting writes (as a database that refuses them), for the rest of this run.
    await query(service.databaseUrl, "ALTER TABLE api_requests RENAME TO api_requests_away")
    const clients = load(service.base, key, 8)
    await untilAnswered(clients, 150)
    await clients.stop()
    // Killed once every answered request is in the journal: what this test asks is that the next start writes them.
    await journaled(service.env.DATA_DIR!, clients.completed.map((c) => c.requestId))
    first.child.kill("SIGKILL")
    await first.exited
    await query(service.databaseUrl, "ALTER TABLE api_requests_away RENAME TO api_requests")

    const second = await start(service)
    const completed = clients.completed.map((c) => c.requestId)
    const counts = await ledgerOnce(service.databaseUrl, completed)
    const recorded = completed.filter((id) => counts.get(id) === 1).length
    console.log(JSON.stringify({ test: "outage then SIGKILL", completed: completed.length, recorded }))
    expect(completed.length).toBeGreaterThan(50)
    expect(recorded).toBe(completed.length)
    second.child.kill("SIGTERM")
    expect(await second.exited).toBe(0)
  }, 360_000)

  it("with the ledger stalled (its table locked), a SIGKILL loses no answered request: the journal has them and the next start writes them", async () => {
    const service = await prepare()
    const first = await start(service)
    const { key } = await workspaceWithKey(service.base)
    // Every write to the ledger waits on the lock (up to the statement timeout), as a stalled database would.
    const release = await holdTableLock(service.databaseUrl, "api_requests")
    let released = false
    try {
      const clients = load(service.base, key, 8)
      await untilAnswered(clients, 120)
      await clients.stop()
      const answered = clients.completed.map((c) => c.requestId)
      expect(answered.length).toBeGreaterThan(50)
      first.child.kill("SIGKILL")
      await first.exited
      await release()
      released = true

      const second = await start(service)
      const counts = await ledgerOnce(service.databaseUrl, answered)
      const recorded = answered.filter((id) => counts.get(id) === 1).length
      console.log(JSON.stringify({ test: "ledger stalled, then SIGKILL", answered: answered.length, recorded }))
      expect(recorded).toBe(answered.length)
      second.child.kill("SIGTERM")
      expect(await second.exited).toBe(0)
    } finally {
      if (!released) await release()
    }
  }, 360_000)

  it("records a stream still open at the shutdown grace before the last flush", async () => {
    const prepared = await prepare()
    // A short grace: what is asked is that the streams it cuts are recorded, however long it is.
    const service = { ...prepared, env: { ...prepared.env, SHUTDOWN_GRACE_MS: "3000" } }
    const first = await start(service)
    const { key, workspaceId } = await workspaceWithKey(service.base)
    // About a hundred seconds of stream: far beyond the grace.
    const streams = await Promise.all(Array.from({ length: 3 }, async () => {
      const answer = await fetch(`${service.base}/provider_a/eu/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "chatgen-4o",
          stream: true,
          messages: [{ role: "user", content: "[simulator chunk_delay_ms=1000 chunk_tokens=1 output_tokens=100] go" }]
        })
      })
      expect(answer.status).toBe(200)
      const reader = answer.body!.getReader()
      await reader.read()
      return { requestId: answer.headers.get("x-request-id")!, reader }
    }))
    first.child.kill("SIGTERM")
    // Read on, so that the client keeps the streams open until the service cuts them.
    await Promise.all(streams.map(async ({ reader }) => {
      try {
        while (!(await reader.read()).done) { /* relayed events */ }
      } catch {
        // Cut at the end of the grace.
      }
    }))
    expect(await first.exited).toBe(0)
    const rows = await query<{ request_id: string; outcome: string; output_tokens: number }>(
      service.databaseUrl,
      "SELECT request_id, outcome, output_tokens FROM api_requests WHERE workspace_id = $1",
      [workspaceId]
    )
    expect(rows.map((r) => r.request_id).sort()).toEqual(streams.map((s) => s.requestId).sort())
    expect(rows.every((r) => r.outcome === "cancelled" && r.output_tokens > 0)).toBe(true)
  }, 120_000)
})
