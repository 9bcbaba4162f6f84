import { describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { exportLayouts } from "../../src/domain/exportLayouts"
import {
  makeUserPseudonymizer,
  protectUserColumns,
  pseudonymTag,
  userPrivacyMode,
  userPseudonyms
} from "../../src/domain/pseudonym"

const secret = "server-secret-1"
const workspace = "9b2f6c1e-0000-4000-8000-000000000001"

describe("pseudonyms", () => {
  it("are stable for the same secret, workspace and user", () => {
    expect(userPseudonyms(secret, workspace, "u-1")).toEqual(userPseudonyms(secret, workspace, "u-1"))
  })

  it("differ by user, secret and workspace", () => {
    const base = pseudonymTag(secret, workspace, "u-1")
    expect(pseudonymTag(secret, workspace, "u-2")).not.toBe(base)
    expect(pseudonymTag("server-secret-2", workspace, "u-1")).not.toBe(base)
    expect(pseudonymTag(secret, "9b2f6c1e-0000-4000-8000-000000000002", "u-1")).not.toBe(base)
  })

  it("are 16 hex digits of an HMAC, carrying nothing of the id", () => {
    const userId = "alice@example.com"
    const pseudonyms = userPseudonyms(secret, workspace, userId)
    expect(pseudonyms.id).toMatch(/^user_[0-9a-f]{16}$/)
    expect(pseudonyms.email).toMatch(/^user_[0-9a-f]{16}@anonymized\.invalid$/)
    expect(pseudonyms.name).toMatch(/^User [0-9a-f]{16}$/)
    expect(pseudonyms.id).not.toContain("alice")
    // A plain hash of the input (no secret) must not give the tag.
    const unkeyed = createHash("sha256").update(`${workspace}:${userId}`).digest("hex").slice(0, 16)
    expect(pseudonyms.id).not.toBe(`user_${unkeyed}`)
  })

  it("derives email and name from the same tag as the id", () => {
    const { id, email, name } = userPseudonyms(secret, workspace, "u-1")
    const tag = id.slice("user_".length)
    expect(email).toBe(`user_${tag}@anonymized.invalid`)
    expect(name).toBe(`User ${tag}`)
  })

  it("a cached pseudonymiser returns the same values as the plain function", () => {
    const pseudonymize = makeUserPseudonymizer(secret, workspace)
    expect(pseudonymize("u-1")).toEqual(userPseudonyms(secret, workspace, "u-1"))
    expect(pseudonymize("u-1")).toBe(pseudonymize("u-1"))
  })
})

describe("privacy of user columns", () => {
  const row = {
    period_start: "2026-01-05T00:00:00+01:00",
    user_id: "u-1",
    user_email: "ann@example.com",
    user_name: null,
    messages: "3"
  }
  const pseudonymize = makeUserPseudonymizer(secret, workspace)

  it("chooses the mode from the workspace settings", () => {
    expect(userPrivacyMode({ anonymizeUsers: false, leaderboardsEnabled: true })).toBe("clear")
    expect(userPrivacyMode({ anonymizeUsers: true, leaderboardsEnabled: true })).toBe("pseudonymise")
    expect(userPrivacyMode({ anonymizeUsers: true, leaderboardsEnabled: false })).toBe("blank")
    expect(userPrivacyMode({ anonymizeUsers: false, leaderboardsEnabled: false })).toBe("blank")
  })

  it("clear keeps the row", () => {
    expect(protectUserColumns(exportLayouts.users, "clear", pseudonymize)(row)).toEqual(row)
  })

  it("blank empties the user-identifying columns only", () => {
    expect(protectUserColumns(exportLayouts.users, "blank", pseudonymize)(row)).toEqual({
      ...row,
      user_id: null,
      user_email: null,
      user_name: null
    })
  })

  it("pseudonymise replaces present identities and keeps absent ones empty", () => {
    const expected = userPseudonyms(secret, workspace, "u-1")
    expect(protectUserColumns(exportLayouts.users, "pseudonymise", pseudonymize)(row)).toEqual({
      ...row,
      user_id: expected.id,
      user_email: expected.email,
      user_name: null
    })
  })

  it("leaves layouts without user-identifying columns untouched", () => {
    const assistantRow = { assistant_id: "a-1", active_users: "2" }
    expect(protectUserColumns(exportLayouts.assistants, "blank", pseudonymize)(assistantRow)).toBe(assistantRow)
  })
})
