/**
 * Issue 24, finding 1 and what a workspace admin can reach of the global people, sessions and
 * invitations, on the real service and PostgreSQL: an invitation never touches an existing account.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database"
import { consoleCall, invitePerson, password, sessionCookieOf, tokenOf } from "../support/console"
import { createWorkspace, useApp } from "../support/app"

const victimEmail = "victim@w1.example"
const victimName = "Victor Victim"
const attackerPassword = "chosen by the attacker!"

describe("an admin of one workspace and the account of another's admin", () => {
  const app = useApp({}, { stores: "postgres" })
  let w1 = ""
  let w2 = ""
  let victimCookie = ""
  let attackerCookie = ""

  beforeAll(async () => {
    w1 = (await createWorkspace(app.current, "W1")).id
    w2 = (await createWorkspace(app.current, "W2")).id
    victimCookie = (await invitePerson(app.current, w1, victimEmail, "admin", victimName)).cookie
    attackerCookie = (await invitePerson(app.current, w2, "attacker@w2.example", "admin", "Mallory")).cookie
  })

  /** The failures an attack leaves for 127.0.0.1 would throttle the next test's sign-ins from the same address. */
  const forgetFailures = () => query(app.current.env.DATABASE_URL!, "DELETE FROM sign_in_failures")

  it("finding 1 as written: inviting W1's admin into W2, opening the link and setting a password signs nobody in as them", async () => {
    // The admin of W2 invites the email of W1's admin through the console API, renaming them on the way.
    const invited = await consoleCall(app.current, "POST", `/console/api/workspaces/${w2}/members`, {
      cookie: attackerCookie,
      body: { email: victimEmail, name: "Renamed by W2", role: "admin" }
    })
    expect(invited.status).toBe(201)
    // The answer tells nothing of the account: invited, under the inviter's own suggestion.
    expect(invited.body).toMatchObject({ email: victimEmail, name: "Renamed by W2", status: "invited" })
    expect(JSON.stringify(invited.body)).not.toContain(victimName)
    const token = tokenOf(invited.body.invitationUrl)

    // Opens the link they are shown and sets a password of their choice (with and without their own session).
    const link = await consoleCall(app.current, "GET", `/console/api/invitations/${token}`)
    expect(link.status).toBe(200)
    for (const cookie of [undefined, attackerCookie]) {
      const taken = await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, {
        cookie,
        body: { password: attackerPassword, name: "Renamed by W2" }
      })
      expect(taken.status).toBe(401)
      expect(taken.body).toEqual({ error: { code: "invitation_not_accepted", message: expect.any(String) } })
      expect(taken.headers.get("set-cookie")).toBeNull()
    }
    // Accepting "as themselves" with their own session is no better.
    const asAttacker = await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { cookie: attackerCookie, body: {} })
    expect(asAttacker.status).toBe(401)
    expect(asAttacker.headers.get("set-cookie")).toBeNull()

    // Not signed in as the victim: the attacker's password opens nothing, their own session is still theirs.
    expect((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: victimEmail, password: attackerPassword } })).status).toBe(401)
    const attackerSession = await consoleCall(app.current, "GET", "/console/api/session", { cookie: attackerCookie })
    expect(attackerSession.body.member.email).toBe("attacker@w2.example")
    expect(attackerSession.body.workspaces.map((w: { id: string }) => w.id)).toEqual([w2])

    // W1 stays unreachable: its members (404, not 200) and a USAGE_EXPORT_API key in it (404, not 201).
    expect((await consoleCall(app.current, "GET", `/console/api/workspaces/${w1}/members`, { cookie: attackerCookie })).status).toBe(404)
    const key = await consoleCall(app.current, "POST", `/console/api/workspaces/${w1}/api-keys`, {
      cookie: attackerCookie,
      body: { name: "stolen", scopes: ["USAGE_EXPORT_API"] }
    })
    expect(key.status).toBe(404)

    // The victim's session still works, their password too, and their name is theirs.
    const victimSession = await consoleCall(app.current, "GET", "/console/api/session", { cookie: victimCookie })
    expect(victimSession.status).toBe(200)
    expect(victimSession.body.member).toEqual({ id: expect.any(String), email: victimEmail, name: victimName })
    expect(victimSession.body.workspaces.map((w: { id: string }) => w.id)).toEqual([w1])
    const signedIn = await consoleCall(app.current, "POST", "/console/api/session", { body: { email: victimEmail, password } })
    expect(signedIn.status).toBe(200)
    expect(signedIn.body.member.name).toBe(victimName)
    const w1Members = await consoleCall(app.current, "GET", `/console/api/workspaces/${w1}/members`, { cookie: victimCookie })
    expect(w1Members.body.data).toContainEqual(expect.objectContaining({ email: victimEmail, name: victimName, status: "active" }))
    const stored = await query<{ name: string }>(app.current.env.DATABASE_URL!, "SELECT name FROM people WHERE email = $1", [victimEmail])
    expect(stored).toEqual([{ name: victimName }])

    // W1's admins can see the attempts: failed sign-ins on an invitation link, from where, never the password
    // nor which workspace invited.
    const audit = await consoleCall(app.current, "GET", `/console/api/workspaces/${w1}/audit?action=session.sign_in_failed`, { cookie: victimCookie })
    expect(audit.body.data).toContainEqual(expect.objectContaining({ actor: victimEmail, target: "invitation link", address: expect.any(String) }))
    expect(JSON.stringify(audit.body)).not.toContain(attackerPassword)
    expect(JSON.stringify(audit.body)).not.toContain("W2")

    // The link is still there for its rightful use: the victim, signed in as themselves, joins W2. Nothing of the
    // account changes: same password, same name, same session.
    const joined = await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { cookie: victimCookie, body: {} })
    expect(joined.status).toBe(200)
    expect(joined.headers.get("set-cookie")).toBeNull()
    expect(joined.body.member.name).toBe(victimName)
    expect(joined.body.workspaces.map((w: { id: string }) => w.id).sort()).toEqual([w1, w2].sort())
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie: victimCookie })).status).toBe(200)
    expect((await consoleCall(app.current, "POST", "/console/api/session", { body: { email: victimEmail, password } })).status).toBe(200)
    // W2 now sees its member under the person's own name, not the one it chose.
    const w2Members = await consoleCall(app.current, "GET", `/console/api/workspaces/${w2}/members`, { cookie: attackerCookie })
    expect(w2Members.body.data).toContainEqual(expect.objectContaining({ email: victimEmail, name: victimName, status: "active" }))

    // And removing them from W2 does not sign them out of W1.
    const memberId = w2Members.body.data.find((m: { email: string }) => m.email === victimEmail).id
    expect((await consoleCall(app.current, "DELETE", `/console/api/workspaces/${w2}/members/${memberId}`, { cookie: attackerCookie })).status).toBe(200)
    expect((await consoleCall(app.current, "GET", `/console/api/workspaces/${w1}/members`, { cookie: victimCookie })).status).toBe(200)
    expect((await consoleCall(app.current, "GET", `/console/api/workspaces/${w2}`, { cookie: victimCookie })).status).toBe(404)
    await forgetFailures()
  })

  it("the invitation page reveals nothing about whether the email has an account", async () => {
    const forExisting = await consoleCall(app.current, "POST", `/console/api/workspaces/${w2}/members`, {
      cookie: attackerCookie,
      body: { email: victimEmail, name: "Suggested", role: "member" }
    })
    const forNew = await consoleCall(app.current, "POST", `/console/api/workspaces/${w2}/members`, {
      cookie: attackerCookie,
      body: { email: "nobody-yet@w2.example", name: "Suggested", role: "member" }
    })
    // The inviter's answers have the same shape and say the same.
    const { email: _e1, id: _i1, createdAt: _c1, invitationUrl: _u1, invitationExpiresAt: _x1, ...existingAnswer } = forExisting.body
    const { email: _e2, id: _i2, createdAt: _c2, invitationUrl: _u2, invitationExpiresAt: _x2, ...newAnswer } = forNew.body
    expect(existingAnswer).toEqual(newAnswer)

    // The link holder's page: the same fields, the same values but the email and the expiry.
    const shown = await Promise.all([forExisting, forNew].map((answer) =>
      consoleCall(app.current, "GET", `/console/api/invitations/${tokenOf(answer.body.invitationUrl)}`)))
    expect(shown.map((answer) => answer.status)).toEqual([200, 200])
    const [existing, fresh] = shown.map((answer) => answer.body)
    expect(Object.keys(existing).sort()).toEqual(["email", "expiresAt", "name", "role", "workspace"])
    expect(Object.keys(fresh).sort()).toEqual(Object.keys(existing).sort())
    expect({ ...existing, email: "", expiresAt: "" }).toEqual({ ...fresh, email: "", expiresAt: "" })
    expect(existing.name).toBe("Suggested")
    expect(JSON.stringify(existing)).not.toContain(victimName)
    expect(JSON.stringify(existing)).not.toMatch(/hasPassword|account/i)
    // A wrong current password answers exactly what an attempt at a new password on an existing account answers.
    const wrongCurrent = await consoleCall(app.current, "POST", `/console/api/invitations/${tokenOf(forNew.body.invitationUrl)}`, {
      body: { currentPassword: "not anybody's password" }
    })
    const newOnExisting = await consoleCall(app.current, "POST", `/console/api/invitations/${tokenOf(forExisting.body.invitationUrl)}`, {
      body: { password: attackerPassword }
    })
    expect([wrongCurrent.status, newOnExisting.status]).toEqual([401, 401])
    expect(wrongCurrent.body).toEqual(newOnExisting.body)
    await forgetFailures()
  })

  it("the inviter cannot rename a person, through the console or the admin API", async () => {
    const renamed = await consoleCall(app.current, "POST", `/console/api/workspaces/${w2}/members`, {
      cookie: attackerCookie,
      body: { email: victimEmail, name: "Renamed Again", role: "member" }
    })
    expect(renamed.status).toBe(201)
    const operatorRename = await consoleCall(app.current, "POST", `/admin/workspaces/${w1}/members`, {
      headers: { authorization: `Bearer ${app.current.env.ADMIN_TOKEN}` },
      body: { email: victimEmail, name: "Renamed By Invitation", role: "admin" }
    })
    expect(operatorRename.status).toBe(201)
    // Active in W1: the workspace shows the person's own name, and so does everything else.
    expect(operatorRename.body).toMatchObject({ name: victimName, status: "active" })
    const session = await consoleCall(app.current, "GET", "/console/api/session", { cookie: victimCookie })
    expect(session.body.member.name).toBe(victimName)
    expect(await query(app.current.env.DATABASE_URL!, "SELECT name FROM people WHERE email = $1", [victimEmail])).toEqual([{ name: victimName }])
  })

  it("the invited person accepts by signing in on the invitation page with their current password", async () => {
    const w3 = (await createWorkspace(app.current, "W3")).id
    const invited = await consoleCall(app.current, "POST", `/admin/workspaces/${w3}/members`, {
      headers: { authorization: `Bearer ${app.current.env.ADMIN_TOKEN}` },
      body: { email: victimEmail, role: "member" }
    })
    const token = tokenOf(invited.body.invitationUrl)
    const both = await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { body: { password: attackerPassword, currentPassword: password } })
    expect(both.status).toBe(400)
    expect(both.body.error.field).toBe("currentPassword")
    const accepted = await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { body: { currentPassword: password, name: "Not Applied" } })
    expect(accepted.status).toBe(200)
    expect(accepted.body.member).toEqual({ id: expect.any(String), email: victimEmail, name: victimName })
    expect(accepted.body.workspaces.map((w: { id: string }) => w.id)).toContain(w3)
    const cookie = sessionCookieOf(accepted.headers)
    expect((await consoleCall(app.current, "GET", `/console/api/workspaces/${w3}`, { cookie })).status).toBe(200)
    // Signing in there did not end the person's other sessions.
    expect((await consoleCall(app.current, "GET", "/console/api/session", { cookie: victimCookie })).status).toBe(200)
    expect((await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { body: { currentPassword: password } })).status).toBe(410)
  })

  it("a wrong current password on the invitation page is a throttled sign-in", async () => {
    await forgetFailures()
    const w4 = (await createWorkspace(app.current, "W4")).id
    const invited = await consoleCall(app.current, "POST", `/admin/workspaces/${w4}/members`, {
      headers: { authorization: `Bearer ${app.current.env.ADMIN_TOKEN}` },
      body: { email: victimEmail, role: "member" }
    })
    const token = tokenOf(invited.body.invitationUrl)
    const statuses: Array<number> = []
    for (let attempt = 0; attempt < 6; attempt++) {
      statuses.push((await consoleCall(app.current, "POST", `/console/api/invitations/${token}`, { body: { currentPassword: `guess number ${attempt}` } })).status)
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
    await forgetFailures()
  })
})
