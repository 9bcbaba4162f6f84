import { describe, expect, it } from "vitest"
import { query } from "../support/database"
import { consoleCall, invitePerson, operatorCookie, password, sessionCookieOf, tokenOf } from "../support/console"
import { call, createWorkspace, testAdminToken, useApp } from "../support/app"

describe("console sessions and invitations", () => {
  const app = useApp({}, { stores: "postgres" })

  it("invitation → password → signed in, with a cookie that is HttpOnly and SameSite=Strict", async () => {
    const workspace = await createWorkspace(app.current, "Invited")
    const invited = await call(app.current, "POST", `/admin/workspaces/${workspace.id}/members`, {
      token: testAdminToken,
      body: { email: "Ada@Example.com", name: "Ada", role: "admin" }
    })
    expect(invited.status).toBe(201)
    expect(invited.body).toMatchObject({ email: "ada@example.com", name: "Ada", role: "admin", status: "invited" })
    expect(invited.body.invitationUrl).toMatch(new RegExp(`^${app.current.origin}/console/invitations/[A-Za-z0-9_-]{43}$`))
    const token = tokenOf(invited.body.invitationUrl)

    const info = await consoleCall(app.current, "GET", `/console/api/invitations/${token}`)
    expect(info.status).toBe(200)
    expect(info.body).toEqual({ email: "ada@example.com", name: "Ada", role: "admin", workspace: { id: workspace.id, name: "Invited" }, expiresAt: expect.any(String) })

    const short = await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { body: { password: "too short" } })
    expect(short.status).toBe(400)
    expect(short.body.error).toMatchObject({ field: "password", message: expect.stringContaining("at least 12 characters") })
    const spaces = await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { body: { password: " ".repeat(12) } })
    expect(spaces.status).toBe(400)
    expect(spaces.body.error).toMatchObject({ field: "password", message: "password must not be only white space" })

    const accepted = await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { body: { password } })
    expect(accepted.status).toBe(200)
    expect(accepted.body).toEqual({
      member: { id: expect.any(String), email: "ada@example.com", name: "Ada" },
      operator: false,
      workspaces: [{ id: workspace.id, name: "Invited", role: "admin" }]
    })
    const setCookie = accepted.headers.get("set-cookie")!
    expect(setCookie).toMatch(/HttpOnly/)
    expect(setCookie).toMatch(/SameSite=Strict/)
    expect(setCookie).not.toMatch(/Secure/)
    const cookie = sessionCookieOf(accepted.headers)

    // Single use.
    const again = await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { body: { password } })
    expect(again.status).toBe(410)
    expect(again.body.error.code).toBe("invitation_used")

    const me = await consoleCall(app.current, "GET", "/console/api/session", { cookie })
    expect(me.status).toBe(200)
    expect(me.body.member.email).toBe("ada@example.com")

    // Password sign-in works; only a hash of the password, invitation token and session id is stored.
    const signedIn = await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "ada@example.com", password } })
    expect(signedIn.status).toBe(200)
    const stored = await query<{ password_hash: string }>(app.current.env.DATABASE_URL!, "SELECT password_hash FROM people WHERE email = $1", ["ada@example.com"])
    expect(stored[0]!.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/)
    expect(stored[0]!.password_hash).not.toContain(password)
    const secrets = await query<{ dump: string }>(
      app.current.env.DATABASE_URL!,
      "SELECT (SELECT string_agg(encode(token_hash, 'escape'), ' ') FROM invitations) || (SELECT string_agg(encode(id_hash, 'hex'), ' ') FROM console_sessions) AS dump"
    )
    expect(secrets[0]!.dump).not.toContain(token)
    expect(secrets[0]!.dump).not.toContain(cookie.split("=")[1]!)

    // Sign-out ends the session at once.
    const out = await consoleCall(app.current, "DELETE", "/console/api/session", { cookie })
    expect(out.status).toBe(204)
    expect(out.headers.get("set-cookie")).toMatch(/Max-Age=0/)
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie })).status).toBe(401)
  })

  it("a fresh invitation voids the previous link and never resets a password; expired links are 410", async () => {
    const workspace = await createWorkspace(app.current, "Reinvited")
    const first = await call(app.current, "POST", `/admin/workspaces/${workspace.id}/members`, { token: testAdminToken, body: { email: "reset@example.com", role: "admin" } })
    const second = await call(app.current, "POST", `/admin/workspaces/${workspace.id}/members`, { token: testAdminToken, body: { email: "reset@example.com", role: "admin" } })
    expect(second.body.id).toBe(first.body.id)
    expect((await consoleCall(app.current, "POST", `/console/api/invitations/${tokenOf(first.body.invitationUrl)}`, { body: { password } })).status).toBe(410)
    expect((await consoleCall(app.current, "POST", `/console/api/invitations/${tokenOf(second.body.invitationUrl)}`, { body: { password } })).status).toBe(200)

    // Invited again once the account exists: the link cannot set a new password, and the old one still works.
    const third = await call(app.current, "POST", `/admin/workspaces/${workspace.id}/members`, { token: testAdminToken, body: { email: "reset@example.com", role: "admin" } })
    const newPassword = "another long passphrase"
    const refused = await consoleCall(app.current, "POST", `/console/api/invitations/${tokenOf(third.body.invitationUrl)}`, { body: { password: newPassword } })
    expect(refused.status).toBe(401)
    expect(refused.body.error.code).toBe("invitation_not_accepted")
    expect((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "reset@example.com", password: newPassword } })).status).toBe(401)
    expect((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "reset@example.com", password } })).status).toBe(200)

    const fourth = await call(app.current, "POST", `/admin/workspaces/${workspace.id}/members`, { token: testAdminToken, body: { email: "late@example.com", role: "admin" } })
    await query(app.current.env.DATABASE_URL!, "UPDATE invitations SET expires_at = now() - interval '1 second' WHERE used_at IS NULL")
    const expired = await consoleCall(app.current, "POST", `/console/api/invitations/${tokenOf(fourth.body.invitationUrl)}`, { body: { password } })
    expect(expired.status).toBe(410)
    expect(expired.body.error.code).toBe("invitation_expired")
    expect((await consoleCall(app.current, "GET", `/console/api/invitations/${"x".repeat(43)}`)).status).toBe(404)
    // The failed attempt above counted for the throttle of 127.0.0.1: start the next test from none.
    await query(app.current.env.DATABASE_URL!, "DELETE FROM sign_in_failures")
  })

  it("expires sessions after 12 idle hours and after 7 days", async () => {
    const workspace = await createWorkspace(app.current, "Expiry")
    const { cookie } = await invitePerson(app.current, workspace.id, "idle@example.com", "admin")
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie })).status).toBe(200)
    await query(app.current.env.DATABASE_URL!, "UPDATE console_sessions SET last_seen_at = now() - interval '12 hours 1 minute'")
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie })).status).toBe(401)

    const again = await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "idle@example.com", password } })
    const fresh = sessionCookieOf(again.headers)
    await query(app.current.env.DATABASE_URL!, "UPDATE console_sessions SET expires_at = now() - interval '1 second'")
    expect((await consoleCall(app.current, "GET", `/console/api/workspaces/${workspace.id}`, { cookie: fresh })).status).toBe(401)
  })

  it("refuses state-changing calls from another origin or without one (403)", async () => {
    const workspace = await createWorkspace(app.current, "Origin")
    const { cookie } = await invitePerson(app.current, workspace.id, "origin@example.com", "admin")
    const forged = await consoleCall(app.current, "POST", `/console/api/workspaces/${workspace.id}/api-keys`, {
      cookie,
      origin: "https://evil.example",
      body: { name: "x", scopes: ["COMPLETION_API"] }
    })
    expect(forged.status).toBe(403)
    expect(forged.body.error.code).toBe("forbidden")
    const missing = await consoleCall(app.current, "DELETE", "/console/api/session", { cookie, origin: null })
    expect(missing.status).toBe(403)
    const signIn = await consoleCall(app.current, "POST", "/console/api/session", { origin: "http://evil.example", body: { email: "origin@example.com", password } })
    expect(signIn.status).toBe(403)
    // Reads need no Origin.
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie, origin: null })).status).toBe(200)
  })

  it("throttles failed sign-ins per email and per address: the sixth failure in 15 minutes is 429 with retry-after", async () => {
    const workspace = await createWorkspace(app.current, "Throttle")
    await invitePerson(app.current, workspace.id, "victim@example.com", "member")
    // Every test calls from 127.0.0.1: start from no failures of this address.
    await query(app.current.env.DATABASE_URL!, "DELETE FROM sign_in_failures")
    for (let i = 0; i < 5; i++) {
      const failed = await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "victim@example.com", password: "wrong password!" } })
      expect(failed.status).toBe(401)
      expect(failed.body.error.code).toBe("invalid_credentials")
    }
    const sixth = await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "victim@example.com", password } })
    expect(sixth.status).toBe(429)
    expect(Number(sixth.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(sixth.body.error.code).toBe("too_many_attempts")
    // Per address too: the same client, another email.
    const other = await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "someone@example.com", password } })
    expect(other.status).toBe(429)
    // The failures are audited in the workspace of the person, without the password.
    await query(app.current.env.DATABASE_URL!, "DELETE FROM sign_in_failures")
    const audit = await call(app.current, "GET", `/admin/workspaces/${workspace.id}/audit?action=session.sign_in_failed`, { token: testAdminToken })
    expect(audit.body.data).toHaveLength(5)
    expect(audit.body.data[0]).toMatchObject({ actor: "victim@example.com", action: "session.sign_in_failed", address: expect.any(String) })
    expect(JSON.stringify(audit.body)).not.toContain("wrong password")
  })

  it("signs the operator in with the admin token; a wrong token is 401", async () => {
    await createWorkspace(app.current, "Operator sees me")
    const wrong = await consoleCall(app.current, "POST", "/console/api/session", { body: { adminToken: "not-the-token-at-all" } })
    expect(wrong.status).toBe(401)
    const cookie = await operatorCookie(app.current)
    const me = await consoleCall(app.current, "GET", "/console/api/session", { cookie })
    expect(me.body).toMatchObject({ member: null, operator: true })
    expect(me.body.workspaces.length).toBeGreaterThan(0)
  })
})
