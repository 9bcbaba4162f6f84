import { createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"
import { userPseudonyms } from "../../src/domain/pseudonym"
import { createKey, createWorkspace, type RunningApp, startApp, useApp } from "../support/app"
import { datePoint, dbQuery, ingest, message, runExport } from "../support/usage"

const body = { from: datePoint("2026-01-05", "UTC"), to: datePoint("2026-01-07", "UTC") }
const people = [
  message("m1", "2026-01-05T10:00:00Z", { user: { id: "u1", email: "ann@example.com", name: "Ann Lee" }, assistant: { id: "a1", name: "Helper" } }),
  message("m2", "2026-01-06T10:00:00Z", { user: { id: "u1", email: "ann@example.com", name: "Ann Lee" } }),
  message("m3", "2026-01-06T11:00:00Z", { user: { id: "u2", email: "bob@example.com" } })
]
const identity = (line: string) => line.split(",").slice(2, 5)

const workspaceWith = async (app: RunningApp, settings: Record<string, boolean>) => {
  const workspace = await createWorkspace(app, "Private", settings)
  const key = (await createKey(app, workspace.id, ["USAGE_EXPORT_API"])).key
  await ingest(app, workspace.id, people)
  return { workspace, key }
}

describe("privacy settings in exports", () => {
  const app = useApp({}, { stores: "postgres" })

  it("anonymizeUsers: stable pseudonyms for id, email and name, other workspaces get others", async () => {
    const { key, workspace } = await workspaceWith(app.current, { anonymizeUsers: true })
    const first = await runExport(app.current, key, "users", body)
    const second = await runExport(app.current, key, "users", body)
    const rows = first.lines!.slice(1)
    expect(rows).toHaveLength(3)
    for (const secret of ["ann@example.com", "Ann Lee", "bob@example.com", ",u1,", ",u2,"]) expect(first.csv).not.toContain(secret)
    const [u1Day5, u1Day6, u2Day6] = rows.map(identity)
    expect(u1Day5![0]).toMatch(/^user_[0-9a-f]{16}$/)
    const tag = u1Day5![0]!.slice("user_".length)
    expect(u1Day5).toEqual([`user_${tag}`, `user_${tag}@anonymized.invalid`, `User ${tag}`])
    // Same user on another day, and in another export: the same pseudonym.
    expect(u1Day6).toEqual(u1Day5)
    expect(second.lines!.slice(1).map(identity)).toEqual(rows.map(identity))
    // u2 has no name: it stays empty rather than being invented.
    expect(u2Day6![0]).not.toBe(u1Day5![0])
    expect(u2Day6![2]).toBe("")
    // Counts are untouched.
    expect(rows[0]!.split(",").slice(5, 6)).toEqual(["1"])

    const other = await workspaceWith(app.current, { anonymizeUsers: true })
    const elsewhere = await runExport(app.current, other.key, "users", body)
    expect(identity(elsewhere.lines![1]!)[0]).not.toBe(u1Day5![0])

    // The stored rows keep the real identity: only exports are pseudonymised.
    const stored = await dbQuery<{ email: string }>(app.current, "SELECT email FROM workspace_users WHERE workspace_id = $1 AND external_id = 'u1'", [workspace.id])
    expect(stored[0]?.email).toBe("ann@example.com")
  })

  it("leaderboards disabled: the user-identifying columns are empty, with or without anonymizeUsers", async () => {
    const variants: ReadonlyArray<Record<string, boolean>> = [{ leaderboardsEnabled: false }, { leaderboardsEnabled: false, anonymizeUsers: true }]
    for (const settings of variants) {
      const { key } = await workspaceWith(app.current, settings)
      const result = await runExport(app.current, key, "users", body)
      expect(result.body.data.recordCount).toBe(3)
      for (const line of result.lines!.slice(1)) expect(identity(line)).toEqual(["", "", ""])
      expect(result.lines![1]!.split(",")[5]).toBe("1")
      // Exports without user columns are complete.
      const assistants = await runExport(app.current, key, "assistants", body)
      expect(assistants.lines![1]).toContain(",a1,Helper,1,1,")
    }
  })

  it("without privacy settings the users export carries the identity as reported", async () => {
    const { key } = await workspaceWith(app.current, {})
    const result = await runExport(app.current, key, "users", body)
    expect(identity(result.lines![1]!)).toEqual(["u1", "ann@example.com", "Ann Lee"])
  })
})

describe("pseudonyms under a configured secret", () => {
  const secret = "a-configured-signing-secret-of-32+chars"
  const app = useApp({ EXPORT_SIGNING_SECRET: secret }, { stores: "postgres" })

  it("are the HMAC of workspace and user under a key derived from EXPORT_SIGNING_SECRET", async () => {
    const { key, workspace } = await workspaceWith(app.current, { anonymizeUsers: true })
    const result = await runExport(app.current, key, "users", body)
    const pseudonymKey = createHmac("sha256", secret).update("user-pseudonym/v1").digest()
    const expected = userPseudonyms(pseudonymKey, workspace.id, "u1")
    expect(identity(result.lines![1]!)).toEqual([expected.id, expected.email, expected.name])
  })
})

describe("the generated secret", () => {
  const app = useApp({}, { stores: "postgres" })

  it("is shared by every instance on the same database, so pseudonyms and links agree", async () => {
    const { key } = await workspaceWith(app.current, { anonymizeUsers: true })
    const fromFirst = await runExport(app.current, key, "users", body)
    const second = await startApp({ DATABASE_URL: app.current.env.DATABASE_URL!, DATA_DIR: app.current.env.DATA_DIR! }, { stores: "postgres" })
    try {
      const fromSecond = await runExport(second, key, "users", body)
      expect(fromSecond.lines!.slice(1).map(identity)).toEqual(fromFirst.lines!.slice(1).map(identity))
      // A link signed by the first instance is accepted by the second.
      const viaSecond = await fetch(fromFirst.body.data.downloadUrl.replace(app.current.origin, second.origin))
      expect(viaSecond.status).toBe(200)
    } finally {
      await second.stop()
    }
  })
})
