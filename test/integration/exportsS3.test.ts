import { beforeAll, describe, expect, it } from "vitest"
import { call, createKey, createWorkspace, useApp } from "../support/app"
import { useS3Server } from "../support/s3Server"
import { datePoint, ingest, message } from "../support/usage"

const body = { from: datePoint("2026-01-01", "Europe/Berlin"), to: datePoint("2026-02-01", "Europe/Berlin") }

describe("usage exports on S3", () => {
  const s3 = useS3Server("exports")
  const app = useApp(s3.env, { stores: "postgres" })

  it("stream the CSV into the bucket and answer a presigned download URL", async () => {
    const workspace = await createWorkspace(app.current)
    const key = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
    await ingest(app.current, workspace.id, [
      message("m1", "2026-01-05T10:00:00Z", { user: { id: "u1", email: "ann@example.com", name: "Ann, Lee" } }),
      message("m2", "2026-01-06T10:00:00Z", { user: { id: "u2", email: "bob@example.com", name: "Bob" } })
    ])
    const answer = await call(app.current, "POST", "/export/users", { token: key, body })
    expect(answer.status).toBe(200)
    const { data } = answer.body
    expect(data.recordCount).toBe(2)
    const link = new URL(data.downloadUrl)
    expect(link.origin).toBe(s3.env.S3_ENDPOINT)
    expect(link.pathname).toBe(`/exports/${data.filePath}`)
    expect(link.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/)
    expect(link.searchParams.get("X-Amz-Expires")).toBe("3600")

    const download = await fetch(data.downloadUrl)
    expect(download.status).toBe(200)
    expect(download.headers.get("content-disposition")).toBe(`attachment; filename="${data.filePath.split("/").pop()}"`)
    expect(await download.text()).toBe(
      "period_start,period_end,user_id,user_email,user_name,messages,conversations,assistants_used,projects_used,features_used,models_used,active_hours,first_active_hour,last_active_hour,input_tokens,output_tokens\r\n" +
        '2026-01-05T00:00:00+01:00,2026-01-06T00:00:00+01:00,u1,ann@example.com,"Ann, Lee",1,0,0,0,,chatgen-4o,1,11,11,10,20\r\n' +
        "2026-01-06T00:00:00+01:00,2026-01-07T00:00:00+01:00,u2,bob@example.com,Bob,1,0,0,0,,chatgen-4o,1,11,11,10,20\r\n"
    )
    // The service's own download route serves local storage only.
    const local = await fetch(`${app.current.url}/downloads/${data.filePath}?expires=9999999999&signature=${"0".repeat(64)}`)
    expect([403, 404]).toContain(local.status)
  })

  it("upload files larger than one part as a multipart upload", async () => {
    const workspace = await createWorkspace(app.current, "Large")
    const key = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
    // 1,000 users on 30 days, one message each: 30,000 rows of about 450 bytes (over the 8 MiB part size).
    const longName = "N".repeat(300)
    for (let day = 0; day < 30; day++) {
      const occurredAt = new Date(Date.UTC(2026, 0, 1 + day, 10)).toISOString()
      await ingest(
        app.current,
        workspace.id,
        Array.from({ length: 1_000 }, (_, u) =>
          message(`m${day}-${u}`, occurredAt, { user: { id: `user-${u}`, email: `user${u}@example.com`, name: `${longName} ${u}` } }))
      )
    }
    s3.requests.length = 0
    const answer = await call(app.current, "POST", "/export/users", { token: key, body })
    expect(answer.status).toBe(200)
    expect(answer.body.data.recordCount).toBe(30_000)
    expect(s3.requests.some((request) => request.startsWith("POST") && request.includes("uploads"))).toBe(true)
    expect(s3.requests.filter((request) => request.startsWith("PUT") && request.includes("partNumber=")).length).toBeGreaterThanOrEqual(2)
    const csv = await (await fetch(answer.body.data.downloadUrl)).text()
    const lines = csv.split("\r\n")
    expect(csv.length).toBeGreaterThan(8 * 1024 * 1024)
    expect(lines).toHaveLength(30_002)
    expect(lines[30_000]).toContain(",user-999,")
  }, 60_000)
})

describe("usage exports on S3 with a missing bucket", () => {
  const s3 = useS3Server("exports")
  // Runs after the server has filled in the environment and before the app starts.
  beforeAll(() => {
    s3.env.S3_BUCKET = "missing"
  })
  const app = useApp(s3.env, { stores: "postgres" })

  it("answer 500 in the export format, and nothing is stored", async () => {
    const workspace = await createWorkspace(app.current)
    const key = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
    await ingest(app.current, workspace.id, [message("m1", "2026-01-05T10:00:00Z")])
    const answer = await call(app.current, "POST", "/export/users", { token: key, body })
    expect(answer.status).toBe(500)
    expect(answer.body).toEqual({ success: false, error: { code: "storage_error", message: expect.any(String) } })
  })
})
