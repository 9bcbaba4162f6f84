/**
 * Passwords over HTTP on the real service and PostgreSQL: a person changes their own (the current one
 * required), the operator issues one-time reset links, and the rule (12 characters, not only white space)
 * holds on every path that sets one.
 */
import { describe, expect, it } from "vitest"
import { query } from "../support/database"
import { consoleCall, invitePerson, operatorCookie, password, sessionCookieOf, tokenOf } from "../support/console"
import { call, createWorkspace, testAdminToken, useApp } from "../support/app"

const twelveSpaces = " ".repeat(12)

describe("passwords", () => {
  const app = useApp({}, { stores: "postgres" })
  const forgetFailures = () => query(app.current.env.DATABASE_URL!, "DELETE FROM sign_in_failures")

  it("a signed-in person changes their own password: the current one required, the rule applied, their other sessions end", async () => {
    const workspace = await createWorkspace(app.current, "Change")
    const { cookie } = await invitePerson(app.current, workspace.id, "changer@example.com", "admin")
    const other = sessionCookieOf((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "changer@example.com", password } })).headers)
    const next = "a brand new passphrase"
    const change = (body: unknown, options: { cookie?: string; origin?: string } = { cookie }) =>
      consoleCall(app.current, "PUT", "/console/api/session/password", { ...options, body })

    expect((await change({ currentPassword: password, newPassword: next }, {})).status).toBe(401)
    expect((await change({ currentPassword: password, newPassword: next }, { cookie: await operatorCookie(app.current) })).status).toBe(403)
    expect((await change({ currentPassword: password, newPassword: next }, { cookie, origin: "https://evil.example" })).status).toBe(403)
    const spaces = await change({ currentPassword: password, newPassword: twelveSpaces })
    expect(spaces.status).toBe(400)
    expect(spaces.body.error).toMatchObject({ field: "newPassword", message: "newPassword must not be only white space" })
    const short = await change({ currentPassword: password, newPassword: "short" })
    expect(short.body.error).toMatchObject({ field: "newPassword", message: "newPassword must have at least 12 characters" })
    const missing = await change({ newPassword: next })
    expect(missing.status).toBe(400)
    expect(missing.body.error.field).toBe("currentPassword")
    const wrong = await change({ currentPassword: "not my password at all", newPassword: next })
    expect(wrong.status).toBe(400)
    expect(wrong.body.error).toMatchObject({ code: "wrong_password", field: "currentPassword" })
    // Nothing changed by the refusals.
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie: other })).status).toBe(200)

    const changed = await change({ currentPassword: password, newPassword: next })
    expect(changed.status).toBe(204)
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie })).status).toBe(200)
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie: other })).status).toBe(401)
    expect((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "changer@example.com", password } })).status).toBe(401)
    expect((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "changer@example.com", password: next } })).status).toBe(200)

    const audit = await call(app.current, "GET", `/admin/workspaces/${workspace.id}/audit`, { token: testAdminToken })
    expect(audit.body.data).toContainEqual(expect.objectContaining({ actor: "changer@example.com", action: "password.changed", target: "changer@example.com" }))
    expect(audit.body.data).toContainEqual(expect.objectContaining({ action: "session.sign_in_failed", target: "password change" }))
    expect(JSON.stringify(audit.body)).not.toContain(next)
    expect(JSON.stringify(audit.body)).not.toContain("not my password")
    await forgetFailures()
  })

  it("guessing the current password through the change is throttled like a sign-in", async () => {
    const workspace = await createWorkspace(app.current, "Guess")
    const { cookie } = await invitePerson(app.current, workspace.id, "guessed@example.com", "member")
    const statuses: Array<number> = []
    for (let attempt = 0; attempt < 6; attempt++) {
      statuses.push((await consoleCall(app.current, "PUT", "/console/api/session/password", {
        cookie,
        body: { currentPassword: `guess number ${attempt}`, newPassword: "the thief's new passphrase" }
      })).status)
    }
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429])
    await forgetFailures()
  })

  it("the operator's reset link: one hour, one use; it sets the password, ends every session and signs in", async () => {
    const workspace = await createWorkspace(app.current, "Reset")
    const { cookie } = await invitePerson(app.current, workspace.id, "forgetful@example.com", "member")
    const reset = (body: unknown, token?: string) => call(app.current, "POST", "/admin/people/password-reset", { ...(token ? { token } : {}), body })

    expect((await reset({ email: "forgetful@example.com" })).status).toBe(401)
    const unknown = await reset({ email: "nobody@example.com" }, testAdminToken)
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toMatchObject({ code: "no_account", field: "email" })
    expect((await reset({ email: "not an email" }, testAdminToken)).body.error.field).toBe("email")
    // Invited but never accepted: no account to reset.
    await call(app.current, "POST", `/admin/workspaces/${workspace.id}/members`, { token: testAdminToken, body: { email: "pending@example.com", role: "member" } })
    expect((await reset({ email: "pending@example.com" }, testAdminToken)).status).toBe(404)

    const before = Date.now()
    const first = await reset({ email: "forgetful@example.com" }, testAdminToken)
    expect(first.status).toBe(201)
    expect(first.body.resetUrl).toMatch(new RegExp(`^${app.current.origin}/console/password-resets/[A-Za-z0-9_-]{43}$`))
    expect(Date.parse(first.body.expiresAt) - before).toBeGreaterThan(3600_000 - 60_000)
    expect(Date.parse(first.body.expiresAt) - before).toBeLessThanOrEqual(3600_000 + 60_000)
    const second = await reset({ email: "Forgetful@Example.com" }, testAdminToken)
    // Only the newest link counts.
    expect((await consoleCall(app.current, "GET", `/console/api/password-resets/${tokenOf(first.body.resetUrl)}`)).status).toBe(410)
    const token = tokenOf(second.body.resetUrl)
    const shown = await consoleCall(app.current, "GET", `/console/api/password-resets/${token}`)
    expect(shown.body).toEqual({ email: "forgetful@example.com", expiresAt: second.body.expiresAt })
    // Issuing changes nothing yet.
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie })).status).toBe(200)

    const spaces = await consoleCall(app.current, "POST", `/console/api/password-resets/${token}`, { body: { password: twelveSpaces } })
    expect(spaces.status).toBe(400)
    expect(spaces.body.error).toMatchObject({ field: "password", message: "password must not be only white space" })
    const used = await consoleCall(app.current, "POST", `/console/api/password-resets/${token}`, { body: { password: "remembered this time" } })
    expect(used.status).toBe(200)
    expect(used.body.member.email).toBe("forgetful@example.com")
    const fresh = sessionCookieOf(used.headers)
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie })).status).toBe(401)
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie: fresh })).status).toBe(200)
    expect((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "forgetful@example.com", password } })).status).toBe(401)
    expect((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "forgetful@example.com", password: "remembered this time" } })).status).toBe(200)
    const again = await consoleCall(app.current, "POST", `/console/api/password-resets/${token}`, { body: { password: "a second use of it" } })
    expect(again.status).toBe(410)
    expect(again.body.error.code).toBe("reset_link_used")
    expect((await consoleCall(app.current, "GET", `/console/api/password-resets/${"x".repeat(43)}`)).status).toBe(404)

    // An expired link is refused.
    const third = await reset({ email: "forgetful@example.com" }, testAdminToken)
    await query(app.current.env.DATABASE_URL!, "UPDATE password_resets SET expires_at = now() - interval '1 second' WHERE used_at IS NULL")
    const expired = await consoleCall(app.current, "POST", `/console/api/password-resets/${tokenOf(third.body.resetUrl)}`, { body: { password: "too late for this" } })
    expect(expired.status).toBe(410)
    expect(expired.body.error.code).toBe("reset_link_expired")

    // Audited in the person's workspace, never with the link or the password; only a hash of the token is stored.
    const audit = await call(app.current, "GET", `/admin/workspaces/${workspace.id}/audit`, { token: testAdminToken })
    const actions = audit.body.data.map((entry: { action: string; actor: string }) => `${entry.actor} ${entry.action}`)
    expect(actions).toContain("operator password.reset_link_created")
    expect(actions).toContain("forgetful@example.com password.reset")
    expect(JSON.stringify(audit.body)).not.toContain(token)
    expect(JSON.stringify(audit.body)).not.toContain("remembered this time")
    const stored = await query<{ dump: string }>(app.current.env.DATABASE_URL!, "SELECT string_agg(encode(token_hash, 'escape'), ' ') AS dump FROM password_resets")
    expect(stored[0]!.dump).not.toContain(token)
  })

  it("no workspace admin can set another person's password: the admin API's reset is the operator's", async () => {
    const workspace = await createWorkspace(app.current, "Admins")
    const admin = await invitePerson(app.current, workspace.id, "boss@example.com", "admin")
    await invitePerson(app.current, workspace.id, "staff@example.com", "member")
    // A session cookie is no admin token.
    const viaCookie = await consoleCall(app.current, "POST", "/admin/people/password-reset", { cookie: admin.cookie, body: { email: "staff@example.com" } })
    expect(viaCookie.status).toBe(401)
    // Inviting the member again gives a link that sets nothing.
    const again = await consoleCall(app.current, "POST", `/console/api/workspaces/${workspace.id}/members`, {
      cookie: admin.cookie,
      body: { email: "staff@example.com", role: "member" }
    })
    const taken = await consoleCall(app.current, "POST", `/console/api/invitations/${tokenOf(again.body.invitationUrl)}`, { body: { password: "the admin's choice!" } })
    expect(taken.status).toBe(401)
    expect((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: "staff@example.com", password } })).status).toBe(200)
    await forgetFailures()
  })
})
