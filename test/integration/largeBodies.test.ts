import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { spawnService, waitForOk } from "../support/serviceProcess"
import { tempDir } from "../support/tempDirs"

const adminToken = "large-bodies-admin-token-1234"

/**
 * Issue 25, point 2: four concurrent chat bodies of one 10 MB message ran the 192 MB heap of `npm start` out
 * inside the tokenizer and ended the process. The built service, as `npm start` runs it (its heap flags, the
 * in-process simulator upstream), gets sixteen 9 MB messages at once, chat completions and messages, from four
 * workspaces: each is answered in its endpoint's format, and the process serves on.
 */
describe("sixteen concurrent 9 MB messages", () => {
  it("are each answered, refused in the endpoint's format, and the process lives on", async () => {
    const dataDir = tempDir("ws-large-bodies-")
    const port = String(await Effect.runPromise(freePort))
    const base = `http://127.0.0.1:${port}`
    const service = spawnService({ DATA_DIR: dataDir, PORT: port, HOST: "127.0.0.1", ADMIN_TOKEN: adminToken, LOG_LEVEL: "warning" })
    try {
      await waitForOk(`${base}/readyz`)
      const admin = async (route: string, body: unknown) =>
        (await (await fetch(`${base}${route}`, {
          method: "POST",
          headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
          body: JSON.stringify(body)
        })).json()) as { id: string; key: string }
      const keys: Array<string> = []
      for (let i = 0; i < 4; i++) {
        const workspace = await admin("/admin/workspaces", { name: `w${i}` })
        keys.push((await admin(`/admin/workspaces/${workspace.id}/api-keys`, { name: "k", scopes: ["COMPLETION_API"] })).key)
      }
      const size = 9 * 1024 * 1024
      // Words (many short pieces) and a run of one letter (one long piece a slice: the costliest to count).
      const texts = ["hello world ".repeat(size / 12), "a".repeat(size)]
      const chat = (key: string, content: string) =>
        fetch(`${base}/provider_a/eu/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content }] })
        })
      const messages = (key: string, content: string) =>
        fetch(`${base}/provider_b/eu/v1/messages`, {
          method: "POST",
          headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
          body: JSON.stringify({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 16, messages: [{ role: "user", content }] })
        })
      const answers = await Promise.all(
        Array.from({ length: 16 }, async (_, i) => {
          const send = i % 2 === 0 ? chat : messages
          const answer = await send(keys[i % 4]!, texts[Math.floor(i / 2) % 2]!)
          return { endpoint: send === chat ? "chat" : "messages", status: answer.status, body: (await answer.json()) as any }
        })
      )
      for (const { body, endpoint, status } of answers) {
        expect([400, 429, 503], JSON.stringify(body)).toContain(status)
        if (endpoint === "chat") expect(body.error).toMatchObject({ type: expect.any(String), code: expect.any(String), message: expect.any(String) })
        else expect(body).toMatchObject({ type: "error", error: { type: expect.any(String), message: expect.any(String) } })
      }
      // The chat bodies cannot fit chatgen-4o's context: refused for it, counted only that far.
      expect(answers.filter((a) => a.endpoint === "chat" && a.body.error.code === "context_length_exceeded").length).toBeGreaterThan(0)

      expect(service.child.exitCode).toBeNull()
      expect((await fetch(`${base}/healthz`)).status).toBe(200)
      const small = await chat(keys[0]!, "hi")
      expect(small.status).toBe(200)
      service.child.kill("SIGTERM")
      expect(await service.exited).toBe(0)
      expect(service.output().stderr).not.toMatch(/heap limit|out of memory/i)
    } finally {
      if (service.child.exitCode === null) {
        service.child.kill("SIGKILL")
        await service.exited
      }
    }
  }, 300_000)
})
