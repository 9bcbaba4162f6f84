import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { builtEntry } from "../support/builtService"
import { call, createKey, createWorkspace, testAdminToken, useApp } from "../support/app"
import { tempDir } from "../support/tempDirs"

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, "../..")

describe("CLI seed and export", () => {
  const app = useApp({}, { stores: "postgres" })

  const cli = async (...args: Array<string>) => {
    try {
      const { stderr, stdout } = await run(process.execPath, [...builtEntry("cli"), ...args], {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", WORKSPACE_API_URL: app.current.url, ADMIN_TOKEN: testAdminToken }
      })
      return { code: 0, stdout, stderr }
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string }
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
    }
  }

  it("seeds demo activity with a progress bar, idempotently, and exports it to a file", async () => {
    const workspace = await createWorkspace(app.current, "Demo")
    const seedArgs = ["seed", workspace.id, "--events", "4000", "--users", "40", "--days", "21", "--start", "2026-03-02", "--timezone", "Europe/Berlin"]
    const seeded = await cli(...seedArgs)
    expect(seeded.code).toBe(0)
    const summary = JSON.parse(seeded.stdout) as { events: number; accepted: number; duplicates: number }
    expect(summary.events).toBe(4000)
    expect(summary).toMatchObject({ accepted: summary.events, duplicates: 0 })
    expect(seeded.stderr).toContain("seeding [")
    expect(seeded.stderr).toContain("100% day 21/21")

    // The same options give the same events: nothing is added twice.
    const again = JSON.parse((await cli(...seedArgs)).stdout) as { accepted: number; duplicates: number }
    expect(again).toMatchObject({ accepted: 0, duplicates: summary.events })

    const output = path.join(tempDir("cli-export-"), "users.csv")
    const exported = await cli(
      "export", "users", "--workspace", workspace.id, "--from", "2026-03-02", "--to", "2026-03-23", "--timezone", "Europe/Berlin", "--output", output
    )
    expect(exported.code).toBe(0)
    const answer = JSON.parse(exported.stdout) as { data: { recordCount: number; dateRange: { from: string; to: string } } }
    expect(answer.data.dateRange).toEqual({ from: "2026-03-02T00:00:00+01:00", to: "2026-03-23T00:00:00+01:00" })
    // Progress on stderr: the rows and the time taken, then the download.
    expect(exported.stderr).toContain(`exported ${answer.data.recordCount.toLocaleString("en")} rows in `)
    expect(exported.stderr).toMatch(/downloaded \d+\.\d MiB to .*users\.csv in \d+\.\d s/)
    const lines = fs.readFileSync(output, "utf8").split("\r\n").slice(0, -1)
    expect(lines[0]).toMatch(/^period_start,period_end,user_id,/)
    expect(lines).toHaveLength(answer.data.recordCount + 1)
    // A weekly rhythm: Wednesdays (weekday) have more active users than Sundays.
    const usersOn = (day: string) => lines.filter((line) => line.startsWith(`2026-03-${day}T`)).length
    expect(usersOn("04")).toBeGreaterThan(usersOn("08"))
    // The 29th is not in the range, the DST change on the 29th is: no +02:00 offsets yet.
    expect(lines.some((line) => line.includes("+02:00"))).toBe(false)

    // Run as the operator: no key of the workspace was made for it (none is left behind), and it is audited.
    const keys = await call(app.current, "GET", `/admin/workspaces/${workspace.id}/api-keys`, { token: testAdminToken })
    expect(keys.body.data).toEqual([])
    const audit = await call(app.current, "GET", `/admin/workspaces/${workspace.id}/audit?action=export.run`, { token: testAdminToken })
    expect(audit.body.data[0]).toMatchObject({ actor: "operator", action: "export.run" })

    // With a key of its own, and the workflows export.
    const key = await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])
    const workflows = await cli("export", "workflows", "--key", key.key, "--from", "2026-03-02", "--to", "2026-03-23")
    expect(workflows.code).toBe(0)
    expect(JSON.parse(workflows.stdout).data.recordCount).toBeGreaterThan(0)
  }, 150_000)

  it("fails with status 1 and a clear message on bad input", async () => {
    const kind = await cli("export", "sessions", "--key", "wsk_x", "--from", "2026-01-01", "--to", "2026-02-01")
    expect(kind.code).toBe(1)
    expect(kind.stderr).toContain("unknown export kind sessions")
    const zone = await cli("export", "users", "--key", "wsk_x", "--from", "2026-01-01", "--to", "2026-02-01", "--timezone", "Nowhere/City")
    expect(zone.stderr).toContain("--timezone")
    const badKey = await cli("export", "users", "--key", `wsk_${"C".repeat(43)}`, "--from", "2026-01-01", "--to", "2026-02-01")
    expect(badKey.code).toBe(1)
    expect(badKey.stderr).toContain("401")
    const events = await cli("seed", "00000000-0000-4000-8000-000000000000", "--events", "many")
    expect(events.stderr).toContain("--events")
  }, 150_000)
})
