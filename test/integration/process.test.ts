import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { Effect } from "effect"
import { chatCompletionAnswer, eventually, startFakeUpstream } from "../support/fakeUpstream"
import { spawnService, waitForOk } from "../support/serviceProcess"
import { tempDir } from "../support/tempDirs"

const postgresRunningIn = (directory: string): boolean => {
  const processes = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })
  return processes.split("\n").some((line) => line.includes("postgres") && line.includes(directory))
}

describe("the service process", () => {
  it("stops at start-up with one line naming a bad setting", async () => {
    for (const [env, expected] of [
      [{ PORT: "abc" }, /^Invalid configuration: PORT: .*received "abc"$/],
      [{ BASE_PATH: "api" }, /^Invalid configuration: BASE_PATH: Expected .*\/api\/public$/],
      [{ DATABASE_URL: "mysql://x" }, /^Invalid configuration: DATABASE_URL: Expected a postgres/],
      [{ UPSTREAM_PROVIDER_A_EU_URL: "not a url" }, /UPSTREAM_PROVIDER_A_EU_URL: Expected an absolute http\(s\) URL/],
      [{ EXPORT_STORAGE: "s3" }, /EXPORT_STORAGE=s3 needs S3_BUCKET/],
      [{ PRICE_TABLE_FILE: "/nonexistent/prices.json" }, /^Invalid configuration: PRICE_TABLE_FILE: \/nonexistent\/prices\.json: cannot be read/],
      [{ HOST: "" }, /^Invalid configuration: HOST: Expected a host name or IP address/],
      [{ PUBLIC_URL: "https://api.example.com/?x=1" }, /^Invalid configuration: PUBLIC_URL: Expected .* without \?query or #fragment/]
    ] as const) {
      const service = spawnService({ ...env, DATA_DIR: tempDir("ws-bad-config-") })
      expect(await service.exited, JSON.stringify(env)).toBe(1)
      const lines = service.output().stderr.trim().split("\n").filter((line) => !line.startsWith("npm warn"))
      expect(lines, JSON.stringify(env)).toHaveLength(1)
      expect(lines[0]).toMatch(expected)
    }
  }, 300_000)

  it("runs on embedded PostgreSQL, shuts down cleanly on SIGTERM and keeps every row across a restart", async () => {
    const dataDir = tempDir("ws-embedded-")
    const port = String(await Effect.runPromise(freePort))
    const env = { DATA_DIR: dataDir, PORT: port, HOST: "127.0.0.1" }
    const base = `http://127.0.0.1:${port}`

    const first = spawnService(env)
    await waitForOk(`${base}/readyz`)
    // No ADMIN_TOKEN given: one was generated and saved under DATA_DIR, and printed once.
    const secrets = JSON.parse(fs.readFileSync(path.join(dataDir, "secrets.json"), "utf8")) as { adminToken: string }
    expect(fs.statSync(path.join(dataDir, "secrets.json")).mode & 0o077).toBe(0)
    expect(first.output().stdout).toContain(secrets.adminToken)
    const auth = { authorization: `Bearer ${secrets.adminToken}`, "content-type": "application/json" }
    const created = await (await fetch(`${base}/admin/workspaces`, { method: "POST", headers: auth, body: JSON.stringify({ name: "Kept" }) })).json() as { id: string }
    const key = await (await fetch(`${base}/admin/workspaces/${created.id}/api-keys`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "k", scopes: ["COMPLETION_API"] })
    })).json() as { id: string }
    expect(postgresRunningIn(dataDir)).toBe(true)

    first.child.kill("SIGTERM")
    expect(await first.exited).toBe(0)
    expect(postgresRunningIn(dataDir)).toBe(false)

    const second = spawnService(env)
    await waitForOk(`${base}/readyz`)
    expect(second.output().stdout).not.toContain(secrets.adminToken)
    const read = await fetch(`${base}/admin/workspaces/${created.id}`, { headers: auth })
    expect(read.status).toBe(200)
    expect(((await read.json()) as { name: string }).name).toBe("Kept")
    const keys = (await (await fetch(`${base}/admin/workspaces/${created.id}/api-keys`, { headers: auth })).json()) as {
      data: Array<{ id: string }>
    }
    expect(keys.data.map((k) => k.id)).toEqual([key.id])
    second.child.kill("SIGINT")
    expect(await second.exited).toBe(0)
    expect(postgresRunningIn(dataDir)).toBe(false)
  }, 300_000)

  it("finishes in-flight requests on SIGTERM before exiting", async () => {
    const dataDir = tempDir("ws-drain-")
    const port = String(await Effect.runPromise(freePort))
    const base = `http://127.0.0.1:${port}`
    const admin = { authorization: "Bearer drain-admin-token-123456", "content-type": "application/json" }
    // An upstream that answers when the test says: the request is in flight from the moment it arrives there.
    let answerNow = () => {}
    const upstream = await startFakeUpstream((_request, response) => {
      answerNow = () => response.writeHead(200, { "content-type": "application/json" }).end(chatCompletionAnswer())
    })
    const service = spawnService({
      DATA_DIR: dataDir,
      PORT: port,
      HOST: "127.0.0.1",
      ADMIN_TOKEN: "drain-admin-token-123456",
      UPSTREAM_PROVIDER_A_EU_URL: upstream.url,
      UPSTREAM_PROVIDER_A_EU_KEY: "drain-upstream-key"
    })
    await waitForOk(`${base}/readyz`)
    const workspace = await (await fetch(`${base}/admin/workspaces`, { method: "POST", headers: admin, body: JSON.stringify({ name: "w" }) })).json() as { id: string }
    const { key } = await (await fetch(`${base}/admin/workspaces/${workspace.id}/api-keys`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ name: "k", scopes: ["COMPLETION_API"] })
    })).json() as { key: string }

    const slow = fetch(`${base}/provider_a/eu/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] })
    })
    await eventually(() => upstream.seen.length, (n) => n === 1)
    service.child.kill("SIGTERM")
    // The service has begun its stop while the request waits for its answer.
    await eventually(() => service.output().stdout, (stdout) => stdout.includes('"message":"shutting down"'))
    answerNow()
    const answer = await slow
    expect(answer.status).toBe(200)
    expect(((await answer.json()) as { object: string }).object).toBe("chat.completion")
    expect(await service.exited).toBe(0)
    // One JSON line for the request, with its id, status, duration and client address.
    const requestLines = service.output().stdout.split("\n").filter((line) => line.includes('"message":"request"')).map((line) => JSON.parse(line))
    expect(requestLines).toContainEqual(expect.objectContaining({
      logLevel: "INFO",
      annotations: {
        requestId: answer.headers.get("x-request-id"),
        method: "POST",
        path: "/provider_a/eu/v1/chat/completions",
        status: 200,
        durationMs: expect.any(Number),
        address: "127.0.0.1"
      }
    }))
    // Stopped accepting: nothing listens any more.
    await expect(fetch(`${base}/healthz`)).rejects.toThrow()

    // The embedded database's password was saved with a generated admin token that nobody was shown
    // (ADMIN_TOKEN was set): the first run that uses it shows it, whatever LOG_LEVEL says.
    const secrets = JSON.parse(fs.readFileSync(path.join(dataDir, "secrets.json"), "utf8")) as { adminToken: string }
    expect(service.output().stdout).not.toContain(secrets.adminToken)
    const without = spawnService({ DATA_DIR: dataDir, PORT: port, HOST: "127.0.0.1", LOG_LEVEL: "error" })
    await waitForOk(`${base}/readyz`)
    expect(without.output().stdout).toContain(secrets.adminToken)
    without.child.kill("SIGTERM")
    expect(await without.exited).toBe(0)
    await upstream.close()
  }, 300_000)
})
