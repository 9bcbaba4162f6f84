/**
 * The web console against the real service and PostgreSQL, in Chromium: the flows of issue 14 item 7.
 * Each page met is screenshotted (test/console/screenshots/) and checked with axe-core.
 */
import * as fs from "node:fs"
import ProviderAClient from "openai"
import type { BrowserContext, Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database"
import { call, createWorkspace, type RunningApp, testAdminToken, useApp } from "../support/app"
import { ingest, message } from "../support/usage"
import { checkPage, hasChromium, newContext, useBrowser } from "./browser"

const strongPassword = "correct horse battery staple"
const newPassword = "a brand new passphrase"

/** Whether this build has the console API (it lands apart from the pages); without it these flows cannot run. */
const hasConsoleApi = async (app: RunningApp): Promise<boolean> => (await fetch(`${app.url}/console/api/session`)).status !== 404

/** Polls until `check` holds; no timing is asserted, the deadline only bounds a broken run. */
const eventually = async (check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

const invite = async (app: RunningApp, workspaceId: string, email: string, role: "admin" | "member", name?: string): Promise<string> => {
  const answer = await call(app, "POST", `/admin/workspaces/${workspaceId}/members`, {
    token: testAdminToken,
    body: { email, role, ...(name === undefined ? {} : { name }) }
  })
  if (answer.status !== 201) throw new Error(`invitation failed: ${answer.status} ${JSON.stringify(answer.body)}`)
  return (answer.body as { invitationUrl: string }).invitationUrl
}

/** Opens an invitation link, sets name and password, and waits for the signed-in start page (admins: Overview, members: API keys). */
const acceptInvitation = async (page: Page, invitationUrl: string, name: string, screenshotName?: string, home = "Overview"): Promise<void> => {
  await page.goto(invitationUrl)
  await page.getByRole("heading", { level: 1, name: "Accept your invitation" }).waitFor()
  await page.getByText(/is invited to/).waitFor()
  if (screenshotName !== undefined) await checkPage(page, screenshotName)
  await page.getByLabel("Name").fill(name)
  await page.getByLabel("Password", { exact: true }).fill(strongPassword)
  await page.getByLabel("Repeat password").fill(strongPassword)
  await page.getByRole("button", { name: "Set password" }).click()
  await page.getByRole("heading", { level: 1, name: home }).waitFor()
}

const goTo = async (page: Page, link: string, heading: string): Promise<void> => {
  await page.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: link, exact: true }).click()
  await page.getByRole("heading", { level: 1, name: heading }).waitFor()
}

// Long flows on two shared cores (scrypt at each sign-in, page loads): generous per-test limits, nothing timed.
describe.skipIf(!hasChromium)("web console flows (real API)", { timeout: 180_000 }, () => {
  const app = useApp({}, { stores: "postgres" })
  const browser = useBrowser()
  let available = false
  let workspaceId = ""
  let admin: BrowserContext
  let adminPage: Page

  beforeAll(async () => {
    available = await hasConsoleApi(app.current)
    if (!available) {
      console.warn("Console flow tests skipped: this build answers 404 at /console/api/session (the console API is not merged).")
      return
    }
    workspaceId = (await createWorkspace(app.current, "Acme Flows")).id
    // Spring forward in Berlin on 2026-03-29: 00:30+01:00 and 03:30+02:00 are one local day of 23 hours.
    await ingest(app.current, workspaceId, [message("d1", "2026-03-28T23:30:00Z"), message("d2", "2026-03-29T01:30:00Z")])
    admin = await newContext(browser.current)
    adminPage = await admin.newPage()
  }, 120_000)

  it("invitation → password → signed in", async (ctx) => {
    if (!available) return ctx.skip()
    const url = await invite(app.current, workspaceId, "ada@example.com", "admin")
    await acceptInvitation(adminPage, url, "Ada Admin", "flow-01-invitation")
    expect(await adminPage.getByText("ada@example.com").count()).toBeGreaterThan(0)
    await checkPage(adminPage, "flow-02-overview-empty")
    // The link is single-use.
    const again = await newContext(browser.current)
    const page = await again.newPage()
    await page.goto(url)
    await page.getByText(/already used, has expired/).waitFor()
    await again.close()
  })

  let recorded = { requests: 0, tokens: 0 }

  it("creates a key shown once, uses it with the openai client, revokes it: the client gets 401", async (ctx) => {
    if (!available) return ctx.skip()
    await goTo(adminPage, "API keys", "API keys")
    await adminPage.getByLabel("Name").fill("flow-app")
    await adminPage.getByRole("button", { name: "Create key" }).click()
    const key = (await adminPage.getByTestId("new-key").textContent()) ?? ""
    expect(key).toMatch(/^wsk_/)
    await checkPage(adminPage, "flow-03-key-created")

    const client = new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
    for (let i = 0; i < 3; i++) {
      const answer = await client.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: `hello ${i}` }] })
      recorded = { requests: recorded.requests + 1, tokens: recorded.tokens + (answer.usage?.total_tokens ?? 0) }
    }

    // Shown once: gone after Done and after a reload; the list shows only its prefix.
    await adminPage.getByRole("button", { name: "Done" }).click()
    await adminPage.reload()
    await adminPage.getByRole("rowheader", { name: "flow-app" }).waitFor()
    expect(await adminPage.content()).not.toContain(key)
    await checkPage(adminPage, "flow-04-keys")

    await adminPage.getByRole("button", { name: "Revoke flow-app" }).click()
    await adminPage.getByRole("dialog").getByRole("button", { name: "Revoke" }).click()
    await adminPage.getByRole("dialog").waitFor({ state: "detached" })
    await adminPage.getByText(/^Revoked/).waitFor()
    // Key lookups are cached for a second: wait for the refusal, then check it is the library's 401.
    let status = 0
    await eventually(async () => {
      try {
        // Still inside the lookup cache's second: a real, recorded request the overview must count too.
        const answer = await client.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content: "after revoke" }] })
        recorded = { requests: recorded.requests + 1, tokens: recorded.tokens + (answer.usage?.total_tokens ?? 0) }
        return false
      } catch (error) {
        status = error instanceof ProviderAClient.APIError ? error.status ?? 0 : 0
        return status !== 0
      }
    }, "the revoked key to be refused", 30_000)
    expect(status).toBe(401)
  })

  it("shows the recorded numbers in the overview's charts", async (ctx) => {
    if (!available) return ctx.skip()
    await goTo(adminPage, "Overview", "Overview")
    // Usage records reach PostgreSQL in batches: reload until they are in.
    await eventually(async () => {
      await adminPage.reload()
      await adminPage.locator("[data-total=requests]").waitFor()
      return (await adminPage.locator("[data-total=requests]").textContent()) === String(recorded.requests)
    }, "the requests to be recorded")
    expect(await adminPage.locator("[data-total=tokens]").textContent()).toBe(recorded.tokens.toLocaleString("en-US"))
    await adminPage.locator(".chart canvas").first().waitFor()
    await adminPage.getByText("Requests per day: show the numbers").click()
    const today = new Date().toISOString().slice(0, 10)
    const row = adminPage.getByRole("row", { name: new RegExp(`^${today}`) }).first()
    expect((await row.getByRole("cell").allTextContents()).map(Number).reduce((a, b) => a + b, 0)).toBe(recorded.requests)
    await checkPage(adminPage, "flow-05-overview")
  })

  it("runs a users export over a DST change and downloads it", async (ctx) => {
    if (!available) return ctx.skip()
    await goTo(adminPage, "Exports", "Exports")
    await adminPage.getByLabel("Data type").selectOption("users")
    await adminPage.getByLabel("Time zone").selectOption("Europe/Berlin")
    await adminPage.getByLabel("From").fill("2026-03-28")
    await adminPage.getByLabel("To").fill("2026-03-30")
    await adminPage.getByRole("button", { name: "Run export" }).click()
    await adminPage.getByTestId("record-count").waitFor()
    expect(await adminPage.getByTestId("record-count").textContent()).toBe("1")
    await checkPage(adminPage, "flow-06-export")
    const [download] = await Promise.all([
      adminPage.waitForEvent("download"),
      adminPage.getByRole("link", { name: "Download CSV" }).click()
    ])
    const csv = fs.readFileSync((await download.path()) ?? "", "utf8")
    const lines = csv.split("\r\n").filter((line) => line !== "")
    expect(lines).toHaveLength(2)
    // One local day of 23 hours: +01:00 at its start, +02:00 at its end; both messages on it.
    expect(lines[1]?.split(",").slice(0, 2)).toEqual(["2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00"])
    expect(lines[1]?.split(",")[5]).toBe("2")

    // The recent list comes from the server: after a reload (no state of this tab) it still shows the
    // export, who ran it, and a link that downloads the same file.
    await adminPage.reload()
    const recent = adminPage.getByRole("table", { name: "Recent exports" })
    const row = recent.getByRole("row").filter({ has: adminPage.getByRole("rowheader", { name: "users" }) }).first()
    await row.waitFor()
    const cells = await row.getByRole("cell").allTextContents()
    expect(cells[1]).toBe("1")
    expect(cells[2]).toContain("ada@example.com")
    const [again] = await Promise.all([
      adminPage.waitForEvent("download"),
      row.getByRole("link", { name: "Download users export" }).click()
    ])
    expect(fs.readFileSync((await again.path()) ?? "", "utf8")).toBe(csv)
    await checkPage(adminPage, "flow-06b-recent-exports")
  })

  it("shows a member no export page and no export scope; the API refuses them with 403", async (ctx) => {
    if (!available) return ctx.skip()
    await goTo(adminPage, "Members", "Members")
    await adminPage.getByLabel("Email").fill("max@example.com")
    await adminPage.getByLabel("Role", { exact: true }).selectOption("member")
    await adminPage.getByRole("button", { name: "Invite" }).click()
    const url = (await adminPage.getByTestId("invitation-url").textContent()) ?? ""
    await checkPage(adminPage, "flow-07-members")

    const member = await newContext(browser.current)
    const page = await member.newPage()
    await acceptInvitation(page, url, "Max Member", undefined, "API keys")
    const nav = page.getByRole("navigation", { name: "Workspace" })
    expect(await nav.getByRole("link").allTextContents()).toEqual(["API keys", "Models"])
    expect(await page.getByLabel(/USAGE_EXPORT_API/).count()).toBe(0)
    await checkPage(page, "flow-08-member-keys")
    await goTo(page, "Models", "Models")
    await page.getByRole("rowheader", { name: "chatgen-4o", exact: true }).waitFor()
    await checkPage(page, "flow-08b-member-models")
    await page.goto(`${app.current.url}/console/w/${workspaceId}/exports`)
    await page.getByRole("heading", { level: 1, name: "Page not found" }).waitFor()

    const origin = { origin: app.current.origin }
    const exportKey = await page.request.post(`${app.current.url}/console/api/workspaces/${workspaceId}/api-keys`, {
      headers: origin, data: { name: "sneaky", scopes: ["USAGE_EXPORT_API"] }
    })
    expect(exportKey.status()).toBe(403)
    const exporting = await page.request.post(`${app.current.url}/console/api/workspaces/${workspaceId}/exports/users`, {
      headers: origin, data: { from: { date: "2026-03-28", timezone: "UTC" }, to: { date: "2026-03-31", timezone: "UTC" } }
    })
    expect(exporting.status()).toBe(403)
    await member.close()
  })

  it("an existing person joins another workspace from its link: a new password is refused, their current one accepts", async (ctx) => {
    if (!available) return ctx.skip()
    const second = (await createWorkspace(app.current, "Second Flows")).id
    const url = await invite(app.current, second, "ada@example.com", "member", "Not Ada")
    const context = await newContext(browser.current)
    const page = await context.newPage()
    await page.goto(url)
    await page.getByRole("heading", { level: 1, name: "Accept your invitation" }).waitFor()
    await page.getByRole("heading", { level: 2, name: "Already have an account? Sign in to accept" }).waitFor()
    // Whoever holds the link cannot choose Ada's password.
    await page.getByLabel("Password", { exact: true }).fill("the link holder's choice")
    await page.getByLabel("Repeat password").fill("the link holder's choice")
    await page.getByRole("button", { name: "Set password" }).click()
    await page.getByText(/The invitation was not accepted/).waitFor()
    await checkPage(page, "flow-13-invitation-existing-refused")
    // Ada herself signs in on the page with her current password and joins; her name stays hers.
    await page.getByLabel("Current password").fill(strongPassword)
    await page.getByRole("button", { name: "Sign in and accept" }).click()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    await page.getByRole("combobox", { name: "Workspace" }).selectOption({ label: "Second Flows" })
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    const me = await page.request.get(`${app.current.url}/console/api/session`)
    expect(((await me.json()) as { member: { name: string } }).member.name).toBe("Ada Admin")
    await checkPage(page, "flow-14-joined-second-workspace")
    await context.close()
  })

  it("the invited person, already signed in, accepts with one click", async (ctx) => {
    if (!available) return ctx.skip()
    const third = (await createWorkspace(app.current, "Third Flows")).id
    const url = await invite(app.current, third, "ada@example.com", "member")
    await adminPage.goto(url)
    await adminPage.getByText("You are signed in as").waitFor()
    expect(await adminPage.getByLabel(/password/i).count()).toBe(0)
    await checkPage(adminPage, "flow-15-invitation-signed-in")
    await adminPage.getByRole("button", { name: "Accept invitation" }).click()
    await adminPage.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    expect(await adminPage.getByRole("combobox", { name: "Workspace" }).getByRole("option").allTextContents()).toContain("Third Flows")
  })

  it("a person changes their own password from the header; their other session ends", async (ctx) => {
    if (!available) return ctx.skip()
    const url = await invite(app.current, workspaceId, "pat@example.com", "member")
    const here = await newContext(browser.current)
    const page = await here.newPage()
    await acceptInvitation(page, url, "Pat", undefined, "API keys")
    const elsewhere = await newContext(browser.current)
    const other = await elsewhere.newPage()
    await other.goto(`${app.current.url}/console/login`)
    await other.getByLabel("Email").fill("pat@example.com")
    await other.getByLabel("Password", { exact: true }).fill(strongPassword)
    await other.getByRole("button", { name: "Sign in", exact: true }).click()
    await other.getByRole("heading", { level: 1, name: "API keys" }).waitFor()

    await page.getByRole("link", { name: "Change password" }).click()
    await page.getByRole("heading", { level: 1, name: "Change password" }).waitFor()
    await page.getByLabel("Current password").fill(strongPassword)
    await page.getByLabel("New password", { exact: true }).fill(" ".repeat(12))
    await page.getByLabel("Repeat new password").fill(" ".repeat(12))
    await page.getByRole("button", { name: "Change password" }).click()
    await page.getByText("The password must not be only white space.").waitFor()
    await page.getByLabel("New password", { exact: true }).fill(newPassword)
    await page.getByLabel("Repeat new password").fill(newPassword)
    await page.getByRole("button", { name: "Change password" }).click()
    await page.getByText("Your password was changed. Every other session has ended.").waitFor()
    await checkPage(page, "flow-16-password-changed")
    // This session goes on; the other one is over at its next call.
    await page.getByRole("link", { name: "Back to your workspace" }).click()
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    await other.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: "Models", exact: true }).click()
    await other.getByText("Your session has ended. Sign in again.").waitFor()
    await here.close()
    await elsewhere.close()
  })

  it("the operator's reset link sets a new password and signs in; the person's sessions end", async (ctx) => {
    if (!available) return ctx.skip()
    const signedIn = await newContext(browser.current)
    const before = await signedIn.newPage()
    await before.goto(`${app.current.url}/console/login`)
    await before.getByLabel("Email").fill("pat@example.com")
    await before.getByLabel("Password", { exact: true }).fill(newPassword)
    await before.getByRole("button", { name: "Sign in", exact: true }).click()
    await before.getByRole("heading", { level: 1, name: "API keys" }).waitFor()

    const issued = await call(app.current, "POST", "/admin/people/password-reset", { token: testAdminToken, body: { email: "pat@example.com" } })
    expect(issued.status).toBe(201)
    const context = await newContext(browser.current)
    const page = await context.newPage()
    await page.goto(issued.body.resetUrl)
    await page.getByRole("heading", { level: 1, name: "Choose a new password" }).waitFor()
    await page.getByText("pat@example.com").waitFor()
    await checkPage(page, "flow-17-password-reset")
    await page.getByLabel("New password", { exact: true }).fill("reset by the operator's link")
    await page.getByLabel("Repeat new password").fill("reset by the operator's link")
    await page.getByRole("button", { name: "Set password" }).click()
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    expect((await before.request.get(`${app.current.url}/console/api/session`)).status()).toBe(401)
    // Used once: opening it again says so.
    await page.goto(issued.body.resetUrl)
    await page.getByText(/already used, has expired/).waitFor()
    await context.close()
    await signedIn.close()
  })

  it("refuses a state-changing call with a forged Origin", async (ctx) => {
    if (!available) return ctx.skip()
    const forged = await adminPage.request.post(`${app.current.url}/console/api/workspaces/${workspaceId}/api-keys`, {
      headers: { origin: "https://evil.example" }, data: { name: "forged", scopes: ["COMPLETION_API"] }
    })
    expect(forged.status()).toBe(403)
    const keys = await adminPage.request.get(`${app.current.url}/console/api/workspaces/${workspaceId}/api-keys`)
    expect(((await keys.json()) as { data: Array<{ name: string }> }).data.map((k) => k.name)).not.toContain("forged")
  })

  it("sends an expired session back to sign-in", async (ctx) => {
    if (!available) return ctx.skip()
    const context = await newContext(browser.current)
    const page = await context.newPage()
    await page.goto(`${app.current.url}/console/login`)
    await page.getByLabel("Email").fill("max@example.com")
    await page.getByLabel("Password", { exact: true }).fill(strongPassword)
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    // Past both the idle (12 h) and the absolute (7 days) expiry.
    await query(
      app.current.env.DATABASE_URL ?? "",
      "UPDATE console_sessions SET expires_at = now() - interval '1 minute', last_seen_at = now() - interval '13 hours', created_at = now() - interval '8 days' WHERE person_id = (SELECT id FROM people WHERE email = 'max@example.com')"
    )
    // The next call answers 401: the app goes back to sign-in and says why.
    await page.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: "Models", exact: true }).click()
    await page.getByRole("heading", { level: 1, name: "Sign in to the Workspace API console" }).waitFor()
    await page.getByText("Your session has ended. Sign in again.").waitFor()
    await checkPage(page, "flow-09-session-ended")
    await context.close()
  })

  it("signs out", async (ctx) => {
    if (!available) return ctx.skip()
    await adminPage.getByRole("button", { name: "Sign out" }).click()
    await adminPage.getByRole("heading", { level: 1, name: "Sign in to the Workspace API console" }).waitFor()
    await adminPage.getByText("You are signed out.").waitFor()
    expect((await adminPage.request.get(`${app.current.url}/console/api/session`)).status()).toBe(401)
    await adminPage.goto(`${app.current.url}/console/w/${workspaceId}/overview`)
    await adminPage.getByRole("heading", { level: 1, name: "Sign in to the Workspace API console" }).waitFor()
    await admin.close()
  })

  it("lets the operator sign in with the admin token and find the workspace", async (ctx) => {
    if (!available) return ctx.skip()
    const context = await newContext(browser.current)
    const page = await context.newPage()
    await page.goto(`${app.current.url}/console/login`)
    await page.getByText("Operator sign-in").click()
    await page.getByLabel("Admin token").fill(testAdminToken)
    await page.getByRole("button", { name: "Sign in with admin token" }).click()
    await page.getByRole("heading", { level: 1, name: "Workspaces" }).waitFor()
    await page.getByLabel("Search workspaces").fill("Flows")
    await page.getByRole("button", { name: "Search" }).click()
    await page.getByRole("link", { name: "Acme Flows" }).click()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    await goTo(page, "Settings", "Settings")
    await page.getByRole("heading", { name: "Rate limits" }).waitFor()
    await page.getByLabel("Workspace time zone").selectOption("Europe/Berlin")
    await page.getByRole("button", { name: "Save" }).click()
    await page.getByText("Saved.").waitFor()
    await checkPage(page, "flow-10-operator-settings")
    // A webhook through the real API over PostgreSQL: its secret once, then listed with no delivery yet.
    const addWebhook = page.getByRole("form", { name: "Add a webhook" })
    await addWebhook.getByLabel("Webhook URL").fill("http://hooks.example.com/flows")
    await addWebhook.getByRole("button", { name: "Add webhook" }).click()
    await addWebhook.getByText("url must be an https URL").waitFor()
    await addWebhook.getByLabel("Webhook URL").fill("https://hooks.example.com/flows")
    await addWebhook.getByRole("button", { name: "Add webhook" }).click()
    expect(await page.getByTestId("webhook-secret").textContent()).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    await page.getByRole("region", { name: "New webhook" }).getByRole("button", { name: "Done" }).click()
    await page.getByRole("region", { name: "Webhook https://hooks.example.com/flows" }).getByText("Nothing sent yet.").waitFor()
    await checkPage(page, "flow-10b-operator-webhooks")
    await goTo(page, "Overview", "Overview")
    await page.getByText("per day in Europe/Berlin").waitFor()
    await goTo(page, "Audit", "Audit")
    await page.getByRole("table").waitFor()
    await checkPage(page, "flow-11-audit")
    await context.close()
  })
})

describe.skipIf(!hasChromium)("web console sign-in throttling (real API)", { timeout: 180_000 }, () => {
  // Its own service and database: the failures it makes would throttle every sign-in from 127.0.0.1.
  const app = useApp({}, { stores: "postgres" })
  const browser = useBrowser()

  it("refuses the sixth failed sign-in within 15 minutes and says when to retry", async (ctx) => {
    if (!(await hasConsoleApi(app.current))) return ctx.skip()
    const context = await newContext(browser.current)
    const page = await context.newPage()
    await page.goto(`${app.current.url}/console/login`)
    await page.getByLabel("Email").fill("nobody@example.com")
    await page.getByLabel("Password", { exact: true }).fill("wrong password, long enough")
    const statuses: Array<number> = []
    page.on("response", (response) => {
      if (response.url().endsWith("/console/api/session") && response.request().method() === "POST") statuses.push(response.status())
    })
    for (let attempt = 1; attempt <= 6; attempt++) {
      await page.getByRole("button", { name: "Sign in", exact: true }).click()
      await eventually(async () => statuses.length === attempt, `sign-in attempt ${attempt}`, 30_000)
      await page.getByRole("alert").waitFor()
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401])
    expect(statuses[5]).toBe(429)
    expect(await page.getByRole("alert").textContent()).toMatch(/try again in \d+/i)
    await checkPage(page, "flow-12-throttled")
    await context.close()
  })
})
