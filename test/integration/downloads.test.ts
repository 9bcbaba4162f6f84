import { createHmac } from "node:crypto"
import * as http from "node:http"
import { beforeAll, describe, expect, it } from "vitest"
import { signDownload } from "../../src/domain/signedUrl"
import { createKey, createWorkspace, type RunningApp, useApp } from "../support/app"
import { datePoint, ingest, message, runExport } from "../support/usage"

const secret = "downloads-test-signing-secret-0123456789"
const linkKey = createHmac("sha256", secret).update("export-download-link/v1").digest()
const body = { from: datePoint("2026-01-05", "UTC"), to: datePoint("2026-01-06", "UTC") }
const now = () => Math.floor(Date.now() / 1000)

/** A GET whose path is sent exactly as written (fetch would resolve `..` segments first). */
const rawGet = (app: RunningApp, path: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL(app.origin)
    const request = http.request({ host: url.hostname, port: url.port, path, method: "GET" }, (response) => {
      let text = ""
      response.on("data", (chunk: Buffer) => void (text += chunk.toString()))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }))
    })
    request.on("error", reject)
    request.end()
  })

const linkFor = (app: RunningApp, filePath: string, expires: number, signature?: string) => {
  const signed = signDownload(linkKey, filePath, expires)
  return `${app.url}/downloads/${filePath}?expires=${expires}&signature=${signature ?? signed.signature}`
}

describe("signed download links", () => {
  const app = useApp({ EXPORT_SIGNING_SECRET: secret, BASE_PATH: "/api/public", PUBLIC_URL: "http://127.0.0.1:1" }, { stores: "postgres" })
  let filePath = ""
  let otherFilePath = ""
  let workspaceId = ""
  let url = new URL("http://invalid")

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    workspaceId = workspace.id
    const key = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
    await ingest(app.current, workspace.id, [message("m1", "2026-01-05T10:00:00Z")])
    const first = await runExportLocal(app.current, key)
    filePath = first.filePath
    url = new URL(first.downloadUrl)
    otherFilePath = (await runExportLocal(app.current, key)).filePath
  })

  // PUBLIC_URL is not where the test server listens: links are rebased onto it.
  const runExportLocal = async (running: RunningApp, key: string) => {
    const answer = await fetch(`${running.url}/export/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    }).then((r) => r.json() as Promise<{ data: { filePath: string; downloadUrl: string } }>)
    return answer.data
  }
  const rebased = (link: URL) => `${app.current.origin}${link.pathname}${link.search}`

  it("are absolute links from PUBLIC_URL and BASE_PATH that download the CSV as an attachment", async () => {
    expect(url.origin).toBe("http://127.0.0.1:1")
    expect(url.pathname).toBe(`/api/public/downloads/${filePath}`)
    expect(Number(url.searchParams.get("expires"))).toBeGreaterThan(now() + 3500)
    expect(url.searchParams.get("signature")).toMatch(/^[0-9a-f]{64}$/)
    const response = await fetch(rebased(url))
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/csv")
    expect(response.headers.get("content-disposition")).toBe(`attachment; filename="${filePath.split("/").pop()}"`)
    expect(await response.text()).toMatch(/^period_start,period_end,user_id,/)
  })

  it("refuse a changed signature, expiry or path with 403", async () => {
    const signature = url.searchParams.get("signature")!
    const expires = url.searchParams.get("expires")!
    const flipped = `${signature[0] === "a" ? "b" : "a"}${signature.slice(1)}`
    const base = `${app.current.url}/downloads`
    const attempts = [
      `${base}/${filePath}?expires=${expires}&signature=${flipped}`,
      `${base}/${filePath}?expires=${Number(expires) + 1}&signature=${signature}`,
      `${base}/${filePath}?expires=${Number(expires) + 86_400}&signature=${signature}`,
      `${base}/${otherFilePath}?expires=${expires}&signature=${signature}`,
      `${base}/${filePath.replace(workspaceId, "00000000-0000-4000-8000-000000000000")}?expires=${expires}&signature=${signature}`,
      `${base}/${filePath.replace(/^users/, "models").replace("/users-usage-", "/models-usage-")}?expires=${expires}&signature=${signature}`,
      `${base}/${filePath}?expires=${expires}`,
      `${base}/${filePath}?signature=${signature}`,
      `${base}/${filePath}`,
      `${base}/${filePath}?expires=soon&signature=${signature}`
    ]
    for (const attempt of attempts) {
      const response = await fetch(attempt)
      expect(response.status, attempt).toBe(403)
      const answer = (await response.json()) as { success: boolean; error: { code: string } }
      expect(answer).toMatchObject({ success: false, error: { code: "invalid_signature" } })
    }
  })

  it("refuse an expired link with 403, even with a genuine signature", async () => {
    const response = await fetch(linkFor(app.current, filePath, now() - 1))
    expect(response.status).toBe(403)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("link_expired")
    // The same file with a genuine future expiry downloads.
    expect((await fetch(linkFor(app.current, filePath, now() + 60))).status).toBe(200)
  })

  it("answer 404 for a genuine link to a file that is not there", async () => {
    const missing = filePath.replace(/-[a-z0-9]+\.csv$/, "-doesnotexist.csv")
    expect((await fetch(linkFor(app.current, missing, now() + 60))).status).toBe(404)
  })

  it("never leave the export folder, even with a signature made for the escaping path", async () => {
    const escapes = [
      `users-usage/${workspaceId}/..%2F..%2F..%2Fsecrets.json`,
      `users-usage/${workspaceId}/%2E%2E%2F%2E%2E%2Fsecrets.json`,
      `users-usage/..%2F..%2Fsecrets.json/x.csv`,
      `.partial/${workspaceId}/x.part`
    ]
    for (const escape of escapes) {
      const decoded = decodeURIComponent(escape)
      const link = new URL(linkFor(app.current, decoded, now() + 60))
      const query = link.search
      for (const path of [`/api/public/downloads/${escape}${query}`, `/api/public/downloads/../../secrets.json${query}`]) {
        const response = await rawGet(app.current, path)
        expect([403, 404], path).toContain(response.status)
        expect(response.body).not.toContain("adminToken")
        expect(response.body).not.toContain("postgresPassword")
      }
    }
  })
})

describe("download links with a short lifetime", () => {
  const app = useApp({ EXPORT_LINK_TTL_SECONDS: "2" }, { stores: "postgres" })

  it("stop working once the lifetime has passed", async () => {
    const workspace = await createWorkspace(app.current)
    const key = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
    await ingest(app.current, workspace.id, [message("m1", "2026-01-05T10:00:00Z")])
    const result = await runExport(app.current, key, "users", body)
    expect(result.csv).toContain("ann@example.com")
    await new Promise((resolve) => setTimeout(resolve, 2200))
    const late = await fetch(result.body.data.downloadUrl)
    expect(late.status).toBe(403)
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe("link_expired")
  })
})
