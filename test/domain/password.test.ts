import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { isTimeZone, normalizeEmail } from "../../src/domain/console"
import { Schema } from "effect"
import { decoyHash, generateToken, hashPassword, hashToken, isWellFormedToken, NewPassword, newPasswordProblem, verifyPassword } from "../../src/domain/password"
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

  it("must have 12 characters, not only white space, at most 1,000; the error names the field", () => {
    expect(newPasswordProblem(" ".repeat(12), "password")).toBe("password must not be only white space")
    expect(newPasswordProblem("\t\n\u00a0\u3000".repeat(3), "newPassword")).toBe("newPassword must not be only white space")
    expect(newPasswordProblem("eleven char", "password")).toBe("password must have at least 12 characters")
    // Characters as people count them: twelve emoji are twelve, eleven are not enough (22 UTF-16 units).
    expect(newPasswordProblem("🔑".repeat(11), "password")).toBe("password must have at least 12 characters")
    expect(newPasswordProblem("🔑".repeat(12), "password")).toBeUndefined()
    expect(newPasswordProblem("x".repeat(1001), "password")).toBe("password must have at most 1000 characters")
    expect(newPasswordProblem("  spaces around are fine  ", "password")).toBeUndefined()
    expect(newPasswordProblem("twelve chars", "password")).toBeUndefined()
    const decode = Schema.decodeUnknownEither(Schema.Struct({ newPassword: NewPassword("newPassword") }))
    const refused = decode({ newPassword: " ".repeat(20) })
    expect(refused._tag === "Left" && refused.left.message).toContain("newPassword must not be only white space")
    expect(decode({ newPassword: "a fine passphrase" })._tag).toBe("Right")
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

  it("keep invitation and password-reset tokens out of logged paths", () => {
    expect(loggablePath("/console/api/invitations/abcDEF123?x=1")).toBe("/console/api/invitations/…")
    expect(loggablePath("/api/public/console/invitations/abcDEF123")).toBe("/api/public/console/invitations/…")
    expect(loggablePath("/console/password-resets/abcDEF123")).toBe("/console/password-resets/…")
    expect(loggablePath("/console/api/password-resets/abcDEF123")).toBe("/console/api/password-resets/…")
    expect(loggablePath("/admin/workspaces")).toBe("/admin/workspaces")
  })
})
