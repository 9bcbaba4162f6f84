import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { freshDatabaseUrl, holdTableLock } from "../support/database"
import { type ServiceProcess, spawnService, waitForOk } from "../support/serviceProcess"
import { tempDir } from "../support/tempDirs"

const adminToken = "timeouts-admin-token-0123456789"
const running: Array<ServiceProcess> = []

afterAll(async () => {
  for (const service of running) {
    service.child.kill("SIGTERM")
    await service.exited
  }
})

describe("timeouts toward the database", () => {
  it("answers 503 with a log line when a statement runs too long or no connection is free, and recovers", async () => {
    const databaseUrl = await freshDatabaseUrl()
    const port = await Effect.runPromise(freePort)
    const base = `http://127.0.0.1:${port}`
    const service = spawnService({
      HOST: "127.0.0.1",
      PORT: String(port),
      DATA_DIR: tempDir("ws-db-timeouts-"),
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN: adminToken,
      DATABASE_STATEMENT_TIMEOUT_MS: "4000",
      DATABASE_ACQUIRE_TIMEOUT_MS: "1000"
    })
    running.push(service)
    await waitForOk(`${base}/readyz`)
    const headers = { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }
    const created = await (await fetch(`${base}/admin/workspaces`, { method: "POST", headers, body: JSON.stringify({ name: "w" }) })).json() as { id: string }
    const read = () => fetch(`${base}/admin/workspaces/${created.id}`, { headers })

    // A hung database, as seen from the service: every query on the table waits on a lock.
    const release = await holdTableLock(databaseUrl, "workspaces")
    // 20 connections in the pool: the first 20 wait out the statement timeout, the rest find no connection
    // (the margins, 1 s to connect and 4 s of statement, are wide for a loaded machine).
    const answers = await Promise.all(Array.from({ length: 26 }, read))
    await release()
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 26 }, () => 503))
    expect(await answers[0]!.json()).toMatchObject({ error: { code: "unavailable" } })

    const reasons = service.output().stdout.split("\n").filter((line) => line.includes("database unavailable"))
      .map((line) => (JSON.parse(line) as { annotations: { reason: string } }).annotations.reason)
    expect(new Set(reasons)).toEqual(new Set(["statement timeout (DATABASE_STATEMENT_TIMEOUT_MS)", "no connection within DATABASE_ACQUIRE_TIMEOUT_MS"]))
    expect(reasons).toHaveLength(26)

    // Released: the same request is served again.
    expect((await read()).status).toBe(200)
  }, 120_000)
})
