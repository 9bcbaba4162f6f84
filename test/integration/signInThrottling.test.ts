import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { consoleCall, invitePerson, password } from "../support/console"
import { call, createWorkspace, type RunningApp, startApp, testAdminToken } from "../support/app"

/**
 * Issue 24, findings 3 and 4, on the real service and PostgreSQL: the console's client address is the
 * connection's (or its trusted proxy's word), and sign-ins are counted before the password is checked,
 * per email and address and per address, so that nobody is locked out from elsewhere.
 */

const signIn = (app: RunningApp, body: Record<string, string>, forwardedFor?: string) =>
  consoleCall(app, "POST", "/console/api/session", { body, ...(forwardedFor === undefined ? {} : { headers: { "x-forwarded-for": forwardedFor } }) })

const failedSignIns = async (app: RunningApp, workspaceId: string) => {
  const audit = await call(app, "GET", `/admin/workspaces/${workspaceId}/audit?action=session.sign_in_failed&limit=200`, { token: testAdminToken })
  expect(audit.status).toBe(200)
  return audit.body.data as ReadonlyArray<{ actor: string; address: string }>
}

const tally = (statuses: ReadonlyArray<number>) =>
  statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {})

describe("sign-ins behind a trusted proxy (TRUSTED_PROXIES=127.0.0.1)", () => {
  let app: RunningApp
  beforeAll(async () => {
    app = await startApp({ TRUSTED_PROXIES: "127.0.0.1" })
  })
  afterAll(async () => {
    await app?.stop()
  })

  it("checks at most five of forty concurrent wrong passwords for one email; its owner still signs in from elsewhere", async () => {
    const workspace = await createWorkspace(app, "Raced")
    await invitePerson(app, workspace.id, "raced@example.com", "admin")
    const attacker = "203.0.113.50"
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signIn(app, { email: "raced@example.com", password: `wrong password ${i}` }, attacker))
    )
    expect(tally(answers.map((answer) => answer.status))).toEqual({ 401: 5, 429: 35 })
    for (const refused of answers.filter((answer) => answer.status === 429)) {
      expect(refused.body.error.code).toBe("too_many_attempts")
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    }
    // Five checked (and audited, from the attacker's address), not forty.
    const failed = await failedSignIns(app, workspace.id)
    expect(failed).toHaveLength(5)
    expect(new Set(failed.map((row) => row.address))).toEqual(new Set([attacker]))
    // The right password from the attacker's address waits; from the owner's, it is let in.
    expect((await signIn(app, { email: "raced@example.com", password }, attacker)).status).toBe(429)
    expect((await signIn(app, { email: "raced@example.com", password }, "198.51.100.2")).status).toBe(200)
  })

  it("never locks a person out from other addresses: fifteen failures from three addresses, then the right password from a fourth", async () => {
    const workspace = await createWorkspace(app, "Targeted")
    await invitePerson(app, workspace.id, "target@example.com", "member")
    for (let a = 1; a <= 3; a++) {
      for (let i = 0; i < 5; i++) expect((await signIn(app, { email: "target@example.com", password: "not the password" }, `192.0.2.${a}`)).status).toBe(401)
      expect((await signIn(app, { email: "target@example.com", password }, `192.0.2.${a}`)).status).toBe(429)
    }
    expect((await signIn(app, { email: "target@example.com", password }, "192.0.2.77")).status).toBe(200)
  })

  it("throttles the operator per address only: wrong admin tokens from elsewhere never lock the operator out", async () => {
    for (let a = 1; a <= 10; a++) {
      for (let i = 0; i < 5; i++) expect((await signIn(app, { adminToken: `wrong-admin-token-${a}-${i}` }, `198.18.0.${a}`)).status).toBe(401)
      expect((await signIn(app, { adminToken: testAdminToken }, `198.18.0.${a}`)).status).toBe(429)
    }
    expect((await signIn(app, { adminToken: testAdminToken }, "198.18.1.1")).status).toBe(200)
  })

  it("believes the right-most X-Forwarded-For entry only: what the caller wrote left of it is ignored", async () => {
    const workspace = await createWorkspace(app, "Forged left")
    await invitePerson(app, workspace.id, "left@example.com", "admin")
    // The attacker (198.51.100.66, appended by the proxy) claims to be 203.0.113.7.
    for (let i = 0; i < 5; i++) {
      expect((await signIn(app, { email: "left@example.com", password: "not the password" }, "203.0.113.7, 198.51.100.66")).status).toBe(401)
    }
    // So the real 203.0.113.7 has not failed: its right password is let in.
    expect((await signIn(app, { email: "left@example.com", password }, "203.0.113.7")).status).toBe(200)
    const failed = await failedSignIns(app, workspace.id)
    expect(failed.map((row) => row.address)).toEqual(Array(5).fill("198.51.100.66"))
  })
})

describe("a forged X-Forwarded-For without TRUSTED_PROXIES", () => {
  let app: RunningApp
  beforeAll(async () => {
    app = await startApp({ AUTH_FAILURE_LIMIT: "5" })
  })
  afterAll(async () => {
    await app?.stop()
  })

  it("is ignored by the sign-in throttle and the audit log: rotating headers check five passwords, audited from the real address", async () => {
    const workspace = await createWorkspace(app, "Forged")
    await invitePerson(app, workspace.id, "forged@example.com", "admin")
    const statuses: Array<number> = []
    for (let i = 0; i < 30; i++) {
      statuses.push((await signIn(app, { email: "forged@example.com", password: `wrong ${i}` }, i % 2 === 0 ? `6.6.6.${i}` : `7.7.7.${i}`)).status)
    }
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(25).fill(429)])
    const failed = await failedSignIns(app, workspace.id)
    expect(failed.map((row) => row.address)).toEqual(Array(5).fill("127.0.0.1"))
  })

  it("is ignored by the failed-credential throttle", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 8; i++) {
      const answer = await call(app, "POST", "/provider_a/eu/v1/chat/completions", {
        token: `wsk_${"f".repeat(42)}${i}`,
        body: { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] },
        headers: { "x-forwarded-for": `6.6.${i}.6` }
      })
      statuses.push(answer.status)
    }
    expect(statuses).toEqual([...Array(5).fill(401), 429, 429, 429])
  })
})
