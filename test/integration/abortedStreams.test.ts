import { spawn } from "node:child_process"
import * as path from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { startFlags } from "../support/builtService"
import { waitForOk } from "../support/serviceProcess"
import { tempDir } from "../support/tempDirs"

const root = path.resolve(import.meta.dirname, "../..")

interface Count {
  readonly alive: number
}

describe("streams the client aborts", () => {
  it("leave nothing behind once they are over: no response of the service or its simulator is kept", async () => {
    const dataDir = tempDir("ws-aborted-")
    const port = String(await Effect.runPromise(freePort))
    const base = `http://127.0.0.1:${port}`
    const admin = { authorization: "Bearer aborted-admin-token-1234", "content-type": "application/json" }
    // The built service as `npm start` runs it, with the in-process simulator (no upstream configured) and a probe
    // that counts the HTTP responses still alive after a full collection.
    const child = spawn(
      process.execPath,
      [...startFlags, "--expose-gc", "--import", path.join(root, "test/support/liveResponses.mjs"), "dist/server/main.js"],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", DATA_DIR: dataDir, PORT: port, HOST: "127.0.0.1", ADMIN_TOKEN: "aborted-admin-token-1234" },
        stdio: ["ignore", "pipe", "pipe", "ipc"]
      }
    )
    let stdout = ""
    child.stdout?.on("data", (chunk: Buffer) => void (stdout += chunk.toString()))
    child.stderr?.resume()
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    const count = () =>
      new Promise<Count>((resolve) => {
        child.once("message", (message) => resolve(message as Count))
        child.send("count")
      })
    const endedWith499 = () => stdout.split("\n").filter((line) => line.includes('"message":"request"') && line.includes('"status":499')).length
    try {
      await waitForOk(`${base}/readyz`)
      const workspace = await (await fetch(`${base}/admin/workspaces`, {
        method: "POST",
        headers: admin,
        body: JSON.stringify({ name: "w", settings: { rateLimits: { families: { chat_completions: { requestsPerMinute: 100_000, tokensPerMinute: 100_000_000 } } } } })
      })).json() as { id: string }
      const { key } = await (await fetch(`${base}/admin/workspaces/${workspace.id}/api-keys`, {
        method: "POST",
        headers: admin,
        body: JSON.stringify({ name: "k", scopes: ["COMPLETION_API"] })
      })).json() as { key: string }
      const abortStreams = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const abort = new AbortController()
          const answer = await fetch(`${base}/provider_a/eu/v1/chat/completions`, {
            method: "POST",
            signal: abort.signal,
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            // Paced: the stream is still being written, by the simulator and the service, when the client goes.
            body: JSON.stringify({ model: "chatgen-4o", stream: true, max_tokens: 400, messages: [{ role: "user", content: "[simulator chunk_delay_ms=50] hi" }] })
          })
          expect(answer.status).toBe(200)
          await answer.body!.getReader().read()
          abort.abort()
        }
      }
      // Warm-up, so that what is allocated once (compiled code, pools) is in the baseline.
      await abortStreams(20)
      await expect.poll(endedWith499, { timeout: 30_000 }).toBe(20)
      const before = await count()
      const aborted = 200
      await abortStreams(aborted)
      await expect.poll(endedWith499, { timeout: 60_000 }).toBe(20 + aborted)
      const after = await count()
      // Before the fix the service kept every aborted stream's response (with its socket, request and
      // fiber: about 14 KB): 200 more here. The margin is for finalizers not run yet, not for leaks.
      expect(after.alive - before.alive).toBeLessThan(10)
    } finally {
      child.kill("SIGTERM")
      await exited
    }
  }, 300_000)
})
