import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { isTimeZone, normalizeEmail } from "../../src/domain/console"
import { decoyHash, generateToken, hashPassword, hashToken, isWellFormedToken, verifyPassword } from "../../src/domain/password"
import { loggablePath } from "../../src/http/requestContext"

describe("passwords", () => {
  it("are stored as scrypt with parameters and a fresh salt, and verified", async () => {
    const [first, second] = await Effect.runPromise(Effect.all([hashPassword("a long enough password"), hashPassword("a long enough password")]))
    expect(first).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
    expect(first).not.toBe(second)
    expect(await Effect.runPromise(verifyPassword("a long enough password", first!))).toBe(true)
    expect(await Effect.runPromise(verifyPassword("a long enough passworD", first!))).toBe(false)
    expect(await Effect.runPromise(verifyPassword("anything", decoyHash))).toBe(false)
    expect(await Effect.runPromise(verifyPassword("anything", "md5$abc"))).toBe(false)
  })

  it("tokens are 256-bit, well formed, and hashed", () => {
    const token = generateToken()
    expect(isWellFormedToken(token)).toBe(true)
    expect(isWellFormedToken(`${token}x`)).toBe(false)
    expect(hashToken(token)).toHaveLength(32)
  })
})

describe("console helpers", () => {
  it("normalise emails and know IANA zones", () => {
    expect(normalizeEmail("  Ada@Example.COM ")).toBe("ada@example.com")
    expect(isTimeZone("Europe/Berlin")).toBe(true)
    expect(isTimeZone("UTC")).toBe(true)
    expect(isTimeZone("+01:00")).toBe(false)
    expect(isTimeZone("Mars/Olympus")).toBe(false)
  })

  it("keep invitation tokens out of logged paths", () => {
    expect(loggablePath("/console/api/invitations/abcDEF123?x=1")).toBe("/console/api/invitations/…")
    expect(loggablePath("/api/public/console/invitations/abcDEF123")).toBe("/api/public/console/invitations/…")
    expect(loggablePath("/admin/workspaces")).toBe("/admin/workspaces")
  })
})
