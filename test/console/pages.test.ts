/**
 * Every page of the web console in Chromium, served by the real service, with the console API answered
 * by stubs: what each page shows, its empty and error states, role-dependent parts, a screenshot of
 * each (test/console/screenshots/) and an axe-core check. The flows against the real API are in flows.test.ts.
 */
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { useApp } from "../support/app"
import { checkPage, hasChromium, newContext, useBrowser } from "./browser"
import {
  activityRows, adminSession, apiKeys, auditEntries, budgetStatus, daysAgo, type Handler, memberSession, members, operatorSession,
  settings, stubConsoleApi, upstreams, usageRows, webhookDeliveries, webhooks
} from "./stubApi"

/** The API of a workspace with some traffic, as its admin (or member) sees it; exports run are listed after. */
const workspaceApi = (session: unknown): Handler => {
  const exportsRun: Array<unknown> = []
  return ({ method, path, body }) => workspaceAnswer(session, exportsRun, { method, path, body })
}

const workspaceAnswer = (
  session: unknown,
  exportsRun: Array<unknown>,
  { body, method, path }: { readonly method: string; readonly path: string; readonly body: unknown }
): ReturnType<Handler> => {
  if (path === "session") return method === "DELETE" ? { status: 204 } : { status: 200, body: session }
  if (path === "workspaces/ws1/usage") return { status: 200, body: { data: usageRows } }
  if (path === "workspaces/ws1/activity") return { status: 200, body: { data: activityRows } }
  if (path === "workspaces/ws1/settings" && method === "PATCH") return { status: 200, body: { ...settings, ...(body as object) } }
  if (path === "workspaces/ws1/settings") return { status: 200, body: settings }
  if (path === "workspaces/ws1/budget") return { status: 200, body: budgetStatus }
  if (path === "workspaces/ws1/provider-keys") {
    // A member learns only whether a key is set.
    const admin = session === adminSession
    const unset = (provider: string) => ({ provider, set: false, last4: null, createdAt: null, createdBy: null, lastUsedAt: null, lastError: null })
    return {
      status: 200,
      body: {
        data: [
          admin
            ? { provider: "provider_a", set: true, last4: "9fA2", createdAt: daysAgo(12), createdBy: "ada@example.com", lastUsedAt: daysAgo(0), lastError: null }
            : { ...unset("provider_a"), set: true },
          unset("provider_b"),
          admin
            ? { provider: "provider_c", set: true, last4: "77xQ", createdAt: daysAgo(30), createdBy: "operator", lastUsedAt: daysAgo(3), lastError: "The provider refused the key (status 401)." }
            : { ...unset("provider_c"), set: true }
        ]
      }
    }
  }
  if (path === "workspaces/ws1/provider-keys/provider_b" && method === "PUT") {
    const { apiKey } = body as { apiKey: string }
    return apiKey.startsWith("bad")
      ? { status: 400, body: { error: { code: "provider_key_rejected", message: "provider_b refused this key (the provider answered 401). It was not saved.", field: "apiKey" } } }
      : { status: 200, body: { provider: "provider_b", set: true, last4: apiKey.slice(-4), createdAt: new Date().toISOString(), createdBy: "ada@example.com", lastUsedAt: null, lastError: null } }
  }
  if (path === "workspaces/ws1/webhooks" && method === "GET") return { status: 200, body: { data: webhooks } }
  if (path === "workspaces/ws1/webhooks" && method === "POST") {
    const { url } = body as { url: string }
    return url.startsWith("https://10.")
      ? { status: 400, body: { error: { code: "invalid_webhook_url", message: "url must not point at a private, loopback or link-local address (10.0.0.5)", field: "url" } } }
      : { status: 201, body: { id: "wh2", url, events: ["budget.threshold_reached"], createdAt: new Date().toISOString(), secret: "whsec_c3R1Yi1zaWduaW5nLXNlY3JldC1zdHViLXNpZ25pbmctc2VjcmV0IQ==" } }
  }
  if (path === "workspaces/ws1/webhooks/wh1/deliveries") return { status: 200, body: { data: webhookDeliveries } }
  if (path === "workspaces/ws1/webhooks/wh2/deliveries") return { status: 200, body: { data: [] } }
  if (path === "workspaces/ws1/webhooks/wh1" && method === "DELETE") return { status: 200, body: webhooks[0] }
  if (path === "workspaces/ws1/api-keys" && method === "GET") return { status: 200, body: { data: apiKeys } }
  if (path === "workspaces/ws1/api-keys" && method === "POST") {
    const { budget, expiresAt, name, scopes } = body as { name: string; scopes: Array<string>; budget?: unknown; expiresAt?: string }
    return {
      status: 201,
      body: {
        id: "k3", name, scopes, displayPrefix: "wsk_new1…", createdAt: new Date().toISOString(), revokedAt: null, lastUsedAt: null, createdBy: "ada@example.com",
        budget: budget ?? null, spentUsd: budget === undefined ? null : 0, expiresAt: expiresAt ?? null, key: "wsk_new1_secretsecretsecret"
      }
    }
  }
  if (path === "workspaces/ws1/api-keys/k1" && method === "DELETE") return { status: 200, body: { ...apiKeys[0], revokedAt: new Date().toISOString() } }
  if (path === "workspaces/ws1/members" && method === "GET") return { status: 200, body: { data: members } }
  if (path === "workspaces/ws1/members" && method === "POST") {
    return { status: 201, body: { ...members[2], email: (body as { email: string }).email, invitationUrl: "http://127.0.0.1/console/invitations/tok_abc", invitationExpiresAt: "2026-11-30T09:00:00Z" } }
  }
  if (path === "workspaces/ws1/models") {
    return { status: 200, body: { data: [{ provider: "provider_a", family: "chat_completions", id: "chatgen-4o" }, { provider: "provider_c", family: "fim", id: "codemodel-2501" }] } }
  }
  if (path === "workspaces/ws1/audit") return { status: 200, body: { data: auditEntries, nextCursor: "c2" } }
  if (path === "workspaces/ws1/exports" && method === "GET") return { status: 200, body: { data: exportsRun } }
  if (path.startsWith("workspaces/ws1/exports/")) {
    const expiresAt = Math.floor(Date.now() / 1000) + 3600
    const data = {
      filePath: "users-usage/ws1/users-usage-2026-10-01-2026-11-01-a1b2.csv",
      downloadUrl: `http://127.0.0.1/downloads/users-usage/ws1/x.csv?expires=${expiresAt}&signature=ab`,
      dataType: "users",
      recordCount: 1234,
      dateRange: { from: "2026-10-01T00:00:00+02:00", to: "2026-11-01T00:00:00+01:00" }
    }
    exportsRun.unshift({
      ...data,
      id: `e${exportsRun.length + 1}`,
      timezone: "Europe/Berlin",
      createdBy: "ada@example.com",
      createdAt: new Date().toISOString(),
      expiresAt: new Date(expiresAt * 1000).toISOString()
    })
    return { status: 200, body: { success: true, data } }
  }
  return undefined
}

const open = async (page: Page, url: string, heading: string): Promise<void> => {
  await page.goto(url)
  await page.getByRole("heading", { level: 1, name: heading }).waitFor()
}

describe.skipIf(!hasChromium)("web console pages (stubbed API)", { timeout: 120_000 }, () => {
  const app = useApp({}, { stores: "postgres" })
  const browser = useBrowser()

  it("signs in and shows the overview: totals of the recorded numbers, charts, platform activity", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    let signedIn = false
    await stubConsoleApi(page, (request) => {
      if (request.path === "session" && request.method === "GET" && !signedIn) return { status: 401, body: { error: { code: "unauthorized", message: "Sign in first." } } }
      if (request.path === "session" && request.method === "POST") {
        signedIn = true
        return { status: 200, body: adminSession }
      }
      return workspaceApi(adminSession)(request)
    })
    await open(page, `${app.current.url}/console/`, "Sign in to the Workspace API console")
    expect(new URL(page.url()).pathname).toBe("/console/login")
    await checkPage(page, "01-login")
    await page.getByLabel("Email").fill("ada@example.com")
    await page.getByLabel("Password", { exact: true }).fill("correct horse battery")
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    await page.locator(".chart canvas").first().waitFor()
    expect(await page.locator("[data-total=requests]").textContent()).toBe("44")
    expect(await page.locator("[data-total=tokens]").textContent()).toBe("14,300")
    expect(await page.locator("[data-total=cost]").textContent()).toBe("$0.1307")
    expect(await page.locator(".chart canvas").count()).toBe(5)
    // The workspace budget: spent and reserved against the amount.
    const budget = page.getByRole("group", { name: "Workspace budget" })
    expect(await budget.textContent()).toContain("$31.25 spent of $50.00 per month, $4.50 reserved by requests in progress")
    expect(await budget.getByRole("meter").getAttribute("aria-valuenow")).toBe("35.75")
    await page.getByText("Requests per day: show the numbers").click()
    const row = page.getByRole("row", { name: new RegExp(daysAgo(2)) }).first()
    expect(await row.textContent()).toContain("20")
    await checkPage(page, "02-overview")
    await context.close()
  })

  it("shows an empty overview and an error it can retry", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    let fail = true
    await stubConsoleApi(page, (request) => {
      if (request.path === "workspaces/ws1/usage") return { status: 200, body: { data: [] } }
      if (request.path === "workspaces/ws1/activity") {
        return fail ? { status: 500, body: { error: { code: "internal", message: "The database is unavailable." } } } : { status: 200, body: { data: [] } }
      }
      return workspaceApi(adminSession)(request)
    })
    await open(page, `${app.current.url}/console/w/ws1/overview`, "Overview")
    await page.getByText("No API requests in this range.").waitFor()
    await page.getByText("The database is unavailable.").waitFor()
    await checkPage(page, "03-overview-empty-error")
    fail = false
    await page.getByRole("button", { name: "Try again" }).click()
    await page.getByText("No platform messages in this range.").waitFor()
    await context.close()
  })

  it("creates a key shown once with a copy button, and revokes one after confirming", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    const calls = await stubConsoleApi(page, workspaceApi(adminSession))
    await open(page, `${app.current.url}/console/w/ws1/keys`, "API keys")
    await page.getByRole("cell", { name: "wsk_3f9a…" }).waitFor()
    await checkPage(page, "04-keys")
    const billing = page.getByRole("row", { name: /billing-service/ })
    expect(await billing.textContent()).toContain("$20.00/week$3.50 spentExpires Mar 31, 2027")
    await page.getByLabel("Name").fill("reporting")
    await page.getByLabel(/USAGE_EXPORT_API/).check()
    await page.getByLabel("Amount (US dollars)").fill("-3")
    await page.getByText("A number of dollars above 0, or empty for no budget.").waitFor()
    expect(await page.getByRole("button", { name: "Create key" }).isDisabled()).toBe(true)
    await page.getByLabel("Amount (US dollars)").fill("12.5")
    await page.getByLabel("Period").selectOption("day")
    await page.getByLabel(/^Expires/).fill("2030-01-31T18:00")
    await checkPage(page, "04b-key-create-budget")
    const posted = page.waitForRequest((request) => request.method() === "POST" && request.url().endsWith("/api-keys"))
    await page.getByRole("button", { name: "Create key" }).click()
    const sent = (await posted).postDataJSON() as { budget: unknown; expiresAt: string }
    expect(sent.budget).toEqual({ amountUsd: 12.5, period: "day" })
    expect(new Date(sent.expiresAt).getTime()).toBe(new Date("2030-01-31T18:00").getTime())
    await page.getByText("wsk_new1_secretsecretsecret").waitFor()
    expect(await page.getByRole("button", { name: "Copy key" }).isVisible()).toBe(true)
    await checkPage(page, "05-key-created")
    await page.getByRole("button", { name: "Done" }).click()
    expect(await page.getByText("wsk_new1_secretsecretsecret").count()).toBe(0)
    await page.getByRole("button", { name: "Revoke billing-service" }).click()
    await page.getByRole("dialog").waitFor()
    await checkPage(page, "06-key-revoke-confirm")
    await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click()
    await page.getByRole("dialog").waitFor({ state: "detached" })
    expect(calls).toContain("DELETE workspaces/ws1/api-keys/k1")
    await context.close()
  })

  it("runs an export with a visible running state and shows its result and download", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    await stubConsoleApi(page, workspaceApi(adminSession))
    await open(page, `${app.current.url}/console/w/ws1/exports`, "Exports")
    await page.getByText("No exports with a working link.").waitFor()
    await checkPage(page, "07-exports")
    await page.getByLabel("Time zone").selectOption("Europe/Berlin")
    await page.getByLabel("From").fill("2026-10-01")
    await page.getByLabel("To").fill("2026-10-31")
    await page.getByRole("button", { name: "Run export" }).click()
    await page.getByTestId("record-count").waitFor()
    expect(await page.getByTestId("record-count").textContent()).toBe("1,234")
    expect(await page.getByRole("link", { name: "Download CSV" }).getAttribute("href")).toContain("/downloads/")
    // The recent list is read again from the server after the run.
    await page.getByRole("table", { name: "Recent exports" }).getByRole("rowheader", { name: "users" }).waitFor()
    await page.getByRole("cell", { name: /ada@example\.com/ }).waitFor()
    await checkPage(page, "08-export-result")
    await context.close()
  })

  it("lists members, invites one and shows the link to send, changes a role and removes someone after confirming", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    const calls = await stubConsoleApi(page, (request) => {
      if (request.path === "workspaces/ws1/members/p2" && request.method === "PATCH") return { status: 200, body: { ...members[1], role: "admin" } }
      if (request.path === "workspaces/ws1/members/p3" && request.method === "DELETE") return { status: 200, body: members[2] }
      return workspaceApi(adminSession)(request)
    })
    await open(page, `${app.current.url}/console/w/ws1/members`, "Members")
    await page.getByRole("cell", { name: "max@example.com", exact: true }).waitFor()
    await page.getByLabel("Email").fill("eve@example.com")
    await page.getByRole("button", { name: "Invite" }).click()
    await page.getByTestId("invitation-url").waitFor()
    await checkPage(page, "09-members")
    await page.getByLabel("Role of max@example.com").selectOption("admin")
    await page.getByRole("button", { name: "Remove new@example.com" }).click()
    await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click()
    await page.getByRole("dialog").waitFor({ state: "detached" })
    expect(calls).toContain("PATCH workspaces/ws1/members/p2")
    expect(calls).toContain("DELETE workspaces/ws1/members/p3")
    await context.close()
  })

  it("shows settings with the rate limits and what remains now, and the audit log with paging", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    await stubConsoleApi(page, workspaceApi(adminSession))
    await open(page, `${app.current.url}/console/w/ws1/settings`, "Settings")
    await page.getByRole("cell", { name: "588" }).waitFor()
    expect(await page.getByLabel("Workspace time zone").inputValue()).toBe("Europe/Berlin")
    expect(await page.getByLabel("Amount (US dollars)").inputValue()).toBe("50")
    await checkPage(page, "10-settings")
    await page.getByLabel("Amount (US dollars)").fill("75")
    const patched = page.waitForRequest((request) => request.method() === "PATCH" && request.url().endsWith("/settings"))
    await page.getByRole("button", { name: "Save", exact: true }).click()
    // Only what changed is sent.
    expect((await patched).postDataJSON()).toEqual({ budget: { amountUsd: 75, period: "month" } })
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    await page.getByRole("link", { name: "Audit" }).click()
    await page.getByRole("heading", { level: 1, name: "Audit" }).waitFor()
    await page.getByRole("rowheader", { name: "api_key.created" }).waitFor()
    expect(await page.getByRole("button", { name: "Next page" }).isEnabled()).toBe(true)
    await checkPage(page, "11-audit")
    await context.close()
  })

  it("lets an admin check and save a provider key, shows only its last characters, and tells a refused one", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    const calls: Array<string> = []
    const api = workspaceApi(adminSession)
    let savedB: unknown
    await stubConsoleApi(page, (call) => {
      calls.push(`${call.method} ${call.path}`)
      const answer = api(call)
      if (call.method === "PUT" && answer?.status === 200) savedB = answer.body
      if (call.path === "workspaces/ws1/provider-keys" && answer !== undefined && savedB !== undefined) {
        const listed = answer.body as { data: Array<{ provider: string }> }
        return { status: 200, body: { data: listed.data.map((key) => (key.provider === "provider_b" ? savedB : key)) } }
      }
      return answer
    })
    await open(page, `${app.current.url}/console/w/ws1/settings`, "Settings")
    await page.getByRole("heading", { name: "Provider keys" }).waitFor()
    const ownKeyA = page.getByRole("form", { name: "provider_a key" })
    await ownKeyA.getByText("…9fA2").waitFor()
    await page.getByRole("form", { name: "provider_c key" }).getByText("The provider refused the key (status 401).").waitFor()
    const keyB = page.getByRole("form", { name: "provider_b key" })
    expect(await keyB.getByText("No key: requests go with the service's own key.").count()).toBe(1)
    await keyB.getByLabel("provider_b key").fill("bad-key-0000")
    await keyB.getByRole("button", { name: "Check and set key" }).click()
    await keyB.getByText("provider_b refused this key").waitFor()
    await checkPage(page, "10b-provider-keys")
    await keyB.getByLabel("provider_b key").fill("sk-good-key-4321")
    await keyB.getByRole("button", { name: "Check and set key" }).click()
    // Saved: the form is emptied and shows the new key's last characters.
    await keyB.getByText("…4321").waitFor()
    expect(await keyB.getByLabel("Replace the provider_b key").inputValue()).toBe("")
    expect(calls.filter((c) => c === "PUT workspaces/ws1/provider-keys/provider_b")).toHaveLength(2)
    // The key typed is never put back on the page.
    expect(await page.content()).not.toContain("sk-good-key-4321")
    await context.close()
  })

  it("lets an admin add a webhook, shows its secret once, refuses a private URL, lists deliveries and removes one", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    const calls = await stubConsoleApi(page, workspaceApi(adminSession))
    await open(page, `${app.current.url}/console/w/ws1/settings`, "Settings")
    await page.getByRole("heading", { name: "Webhooks" }).waitFor()
    const hook = page.getByRole("region", { name: "Webhook https://hooks.example.com/budgets" })
    await hook.getByRole("cell", { name: "Delivered" }).waitFor()
    expect(await hook.getByRole("cell", { name: "Failed", exact: true }).count()).toBe(1)
    await hook.getByRole("cell", { name: "the receiver answered 503" }).waitFor()
    const form = page.getByRole("form", { name: "Add a webhook" })
    await form.getByLabel("Webhook URL").fill("https://10.0.0.5/hooks")
    await form.getByRole("button", { name: "Add webhook" }).click()
    await form.getByText("url must not point at a private, loopback or link-local address (10.0.0.5)").waitFor()
    await checkPage(page, "10c-webhooks")
    await form.getByLabel("Webhook URL").fill("https://alerts.example.com/in")
    await form.getByRole("button", { name: "Add webhook" }).click()
    await page.getByTestId("webhook-secret").waitFor()
    expect(await page.getByTestId("webhook-secret").textContent()).toMatch(/^whsec_/)
    await checkPage(page, "10d-webhook-secret")
    await page.getByRole("region", { name: "New webhook" }).getByRole("button", { name: "Done" }).click()
    expect(await page.getByTestId("webhook-secret").count()).toBe(0)
    await hook.getByRole("button", { name: "Remove" }).click()
    await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click()
    await page.getByRole("dialog").waitFor({ state: "detached" })
    expect(calls).toContain("POST workspaces/ws1/webhooks")
    expect(calls).toContain("DELETE workspaces/ws1/webhooks/wh1")
    await context.close()
  })

  it("shows a member no export page, no admin pages and no USAGE_EXPORT_API scope", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    await stubConsoleApi(page, workspaceApi(memberSession))
    await open(page, `${app.current.url}/console/w/ws1/keys`, "API keys")
    const nav = page.getByRole("navigation", { name: "Workspace" })
    expect(await nav.getByRole("link").allTextContents()).toEqual(["API keys", "Models"])
    expect(await page.getByLabel(/USAGE_EXPORT_API/).count()).toBe(0)
    expect(await page.getByLabel(/COMPLETION_API/).count()).toBe(1)
    await checkPage(page, "12-member-keys")
    await nav.getByRole("link", { name: "Models" }).click()
    await page.getByRole("rowheader", { name: "codemodel-2501" }).waitFor()
    expect(await page.getByTestId("provider-key-status").textContent()).toBe(
      "provider_a: the workspace's own key · provider_b: the service's key · provider_c: the workspace's own key"
    )
    await checkPage(page, "12b-member-models")
    await open(page, `${app.current.url}/console/w/ws1/exports`, "Page not found")
    await open(page, `${app.current.url}/console/w/ws1/overview`, "Page not found")
    await context.close()
  })

  it("shows the operator the workspace list, creating a workspace and inviting its first admin", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    await stubConsoleApi(page, ({ method, path, query }) => {
      if (path === "session") return { status: 200, body: operatorSession }
      if (path === "workspaces" && method === "GET") {
        const all = [{ id: "ws1", name: "Acme Research", role: "admin", createdAt: null }, { id: "ws2", name: "Globex", role: "admin", createdAt: null }]
        const search = query.get("search")
        return { status: 200, body: { data: all.filter((w) => search === null || w.name.includes(search)), nextCursor: null } }
      }
      if (path === "workspaces" && method === "POST") return { status: 201, body: { id: "ws9", name: "Initech", role: "admin", createdAt: null } }
      if (path === "workspaces/ws9/members") return { status: 201, body: { ...members[0], id: "p9", email: "boss@initech.example", invitationUrl: "http://127.0.0.1/console/invitations/tok_9", invitationExpiresAt: "2026-11-30T09:00:00Z" } }
      return undefined
    })
    await open(page, `${app.current.url}/console/`, "Workspaces")
    await page.getByRole("link", { name: "Globex" }).waitFor()
    await page.getByLabel("Search workspaces").fill("Glo")
    await page.getByRole("button", { name: "Search" }).click()
    await page.getByRole("link", { name: "Acme Research" }).waitFor({ state: "detached" })
    await page.getByLabel("Workspace name").fill("Initech")
    await page.getByRole("button", { name: "Create workspace" }).click()
    await page.getByRole("heading", { name: "Invite the first admin" }).waitFor()
    await page.getByLabel("Email").fill("boss@initech.example")
    await page.getByRole("button", { name: "Invite" }).click()
    await page.getByTestId("invitation-url").waitFor()
    await checkPage(page, "13-operator-workspaces")
    await context.close()
  })

  it("shows the operator every upstream deployment, cooling ones with their time, refreshed on the button and every 10 s", async () => {
    // Berlin: the cooldown's end is shown in the browser's own time zone (14:03:12 UTC is 15:03:12 there in November).
    const context = await newContext(browser.current, { timezoneId: "Europe/Berlin" })
    const page = await context.newPage()
    await page.clock.install()
    let answered = 0
    let failNext = false
    const calls = await stubConsoleApi(page, ({ method, path }) => {
      if (path === "session") return { status: 200, body: operatorSession }
      if (path === "workspaces" && method === "GET") return { status: 200, body: { data: [], nextCursor: null } }
      if (path !== "upstreams") return undefined
      if (failNext) return { status: 503, body: { error: { code: "unavailable", message: "The service is restarting. Retry shortly." } } }
      answered += 1
      // Each answer counts more requests on the cooling deployment, so a refresh is visible.
      return { status: 200, body: { data: upstreams.map((d, i) => (i === 0 ? { ...d, requests: d.requests + answered } : d)) } }
    })
    const requestsOfCooling = async () => Number((await page.getByRole("row", { name: /azure-sweden/ }).getByRole("cell").nth(4).textContent())?.replace(/,/g, ""))
    await open(page, `${app.current.url}/console/`, "Workspaces")
    await page.getByRole("link", { name: "Upstreams" }).click()
    await page.getByRole("heading", { level: 1, name: "Upstreams" }).waitFor()
    expect(await page.getByRole("link", { name: "Upstreams" }).getAttribute("aria-current")).toBe("page")
    expect(await page.getByRole("link", { name: "All workspaces" }).getAttribute("aria-current")).toBeNull()
    const cooling = page.getByRole("row", { name: /azure-sweden/ })
    await cooling.waitFor()
    expect(await page.getByRole("columnheader").allTextContents()).toEqual(["Route", "Deployment", "Kind", "State", "Last error", "Requests", "Failures"])
    expect(await cooling.getByRole("cell").allTextContents()).toEqual([
      "provider_a/eu", "azure", "Cooling until 15:03:12", "answered 429", "1,841", "3"
    ])
    expect(await page.getByRole("row", { name: /bedrock-frankfurt/ }).getByRole("cell").nth(2).textContent()).toBe("Available")
    expect(await page.getByRole("row", { name: /vertex-us-east5/ }).getByRole("cell").nth(3).textContent()).toBe("—")
    expect(await page.getByTestId("upstreams-summary").textContent()).toBe("6 deployments, 1 cooling.")
    await checkPage(page, "19-operator-upstreams")

    const shown = await requestsOfCooling()
    await page.getByRole("button", { name: "Refresh" }).click()
    await expect.poll(requestsOfCooling).toBeGreaterThan(shown)
    const refreshed = await requestsOfCooling()
    // Ten seconds later it asks again by itself.
    const asked = calls.filter((c) => c === "GET upstreams").length
    await page.clock.fastForward(10_000)
    await expect.poll(() => calls.filter((c) => c === "GET upstreams").length).toBeGreaterThan(asked)
    await expect.poll(requestsOfCooling).toBeGreaterThan(refreshed)
    // A refresh that fails says so and leaves the last answer on screen.
    failNext = true
    await page.getByRole("button", { name: "Refresh" }).click()
    await page.getByRole("alert").getByText("The service is restarting. Retry shortly.").waitFor()
    expect(await cooling.isVisible()).toBe(true)
    await checkPage(page, "19b-operator-upstreams-refresh-failed")
    await context.close()
  })

  it("shows the operator an empty upstreams page when nothing is configured", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    await stubConsoleApi(page, ({ path }) => {
      if (path === "session") return { status: 200, body: operatorSession }
      if (path === "upstreams") return { status: 200, body: { data: [] } }
      return undefined
    })
    await open(page, `${app.current.url}/console/upstreams`, "Upstreams")
    await page.getByText("No upstream deployments are configured.").waitFor()
    expect(await page.getByRole("table").count()).toBe(0)
    await checkPage(page, "19c-operator-upstreams-empty")
    await context.close()
  })

  const invitationBody = { email: "new@example.com", name: "Newton", role: "member", workspace: { id: "ws1", name: "Acme Research" }, expiresAt: "2026-11-30T09:00:00Z" }
  const notAccepted = {
    status: 401,
    body: {
      error: {
        code: "invitation_not_accepted",
        message: "The invitation was not accepted. If this email already has an account, sign in with its current password (or sign in first and open the link again); otherwise choose a password of at least 12 characters."
      }
    }
  }

  it("shows an invitation's page with both ways, applies the password rule before asking the server, and says when a link is spent", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    const calls = await stubConsoleApi(page, ({ method, path }) => {
      if (path === "session" && method === "GET") return { status: 401, body: { error: { code: "unauthenticated", message: "Sign in first." } } }
      if (path === "invitations/tok_ok" && method === "GET") return { status: 200, body: invitationBody }
      if (path === "invitations/tok_ok" && method === "POST") return notAccepted
      if (path === "invitations/tok_used") return { status: 410, body: { error: { code: "gone", message: "This invitation was used." } } }
      return undefined
    })
    await open(page, `${app.current.url}/console/invitations/tok_ok`, "Accept your invitation")
    await page.getByText("Acme Research").first().waitFor()
    // Both ways, whatever the email: the page does not know whether it has an account.
    await page.getByRole("heading", { level: 2, name: "New here? Choose a password" }).waitFor()
    await page.getByRole("heading", { level: 2, name: "Already have an account? Sign in to accept" }).waitFor()
    expect(await page.getByText(/left empty, it is Newton/).count()).toBe(1)
    await page.getByLabel("Password", { exact: true }).fill("short")
    await page.getByRole("button", { name: "Set password" }).click()
    await page.getByText("The password must have at least 12 characters.").waitFor()
    await page.getByLabel("Password", { exact: true }).fill(" ".repeat(12))
    await page.getByText("The password must not be only white space.").waitFor()
    await page.getByLabel("Password", { exact: true }).fill("a long enough passphrase")
    await page.getByRole("button", { name: "Set password" }).click()
    await page.getByText("The passwords differ.").waitFor()
    await checkPage(page, "14-invitation")
    expect(calls.filter((call) => call.startsWith("POST"))).toEqual([])
    // The server's refusal, the same for either way, is shown as it is.
    await page.getByLabel("Current password").fill("not my password")
    await page.getByRole("button", { name: "Sign in and accept" }).click()
    await page.getByText(/The invitation was not accepted/).waitFor()
    await checkPage(page, "14b-invitation-refused")
    await open(page, `${app.current.url}/console/invitations/tok_used`, "Accept your invitation")
    await page.getByText(/already used, has expired/).waitFor()
    await checkPage(page, "15-invitation-spent")
    await context.close()
  })

  it("lets the invited person, signed in as themselves, accept with one click", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    const invitee = { ...memberSession, member: { ...memberSession.member, email: "new@example.com" } }
    let bodies: Array<unknown> = []
    await stubConsoleApi(page, ({ body, method, path }) => {
      if (path === "session") return { status: 200, body: invitee }
      if (path === "invitations/tok_ok" && method === "GET") return { status: 200, body: invitationBody }
      if (path === "invitations/tok_ok" && method === "POST") {
        bodies = [...bodies, body]
        return { status: 200, body: invitee }
      }
      return workspaceApi(invitee)({ method, path, body, query: new URLSearchParams() })
    })
    await open(page, `${app.current.url}/console/invitations/tok_ok`, "Accept your invitation")
    await page.getByText("You are signed in as").waitFor()
    // No password field: nothing of the account is asked for or changed.
    expect(await page.getByLabel(/password/i).count()).toBe(0)
    await checkPage(page, "14c-invitation-signed-in")
    await page.getByRole("button", { name: "Accept invitation" }).click()
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    expect(bodies).toEqual([{}])
    await context.close()
  })

  it("shows the operator's reset link page and signs in with the new password", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    let sent: unknown
    await stubConsoleApi(page, ({ body, method, path }) => {
      if (path === "session" && method === "GET") return { status: 401, body: { error: { code: "unauthenticated", message: "Sign in first." } } }
      if (path === "password-resets/tok_reset" && method === "GET") return { status: 200, body: { email: "max@example.com", expiresAt: "2026-11-30T10:00:00Z" } }
      if (path === "password-resets/tok_reset" && method === "POST") {
        sent = body
        return { status: 200, body: memberSession }
      }
      if (path === "password-resets/tok_spent") return { status: 410, body: { error: { code: "reset_link_used", message: "used" } } }
      return workspaceApi(memberSession)({ method, path, body, query: new URLSearchParams() })
    })
    await open(page, `${app.current.url}/console/password-resets/tok_reset`, "Choose a new password")
    await page.getByText("max@example.com").waitFor()
    await page.getByLabel("New password", { exact: true }).fill(" ".repeat(14))
    await page.getByRole("button", { name: "Set password" }).click()
    await page.getByText("The password must not be only white space.").waitFor()
    await checkPage(page, "16-password-reset")
    await page.getByLabel("New password", { exact: true }).fill("remembered this time")
    await page.getByLabel("Repeat new password").fill("remembered this time")
    await page.getByRole("button", { name: "Set password" }).click()
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    expect(sent).toEqual({ password: "remembered this time" })
    await open(page, `${app.current.url}/console/password-resets/tok_spent`, "Choose a new password")
    await page.getByText(/already used, has expired/).waitFor()
    await checkPage(page, "17-password-reset-spent")
    await context.close()
  })

  it("offers a signed-in person a Change password form: the server's refusal names the field, success says what ended", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    const sent: Array<unknown> = []
    await stubConsoleApi(page, ({ body, method, path }) => {
      if (path === "session/password" && method === "PUT") {
        sent.push(body)
        return (body as { currentPassword: string }).currentPassword === "correct horse battery"
          ? { status: 204 }
          : { status: 400, body: { error: { code: "wrong_password", message: "currentPassword is not your current password.", field: "currentPassword" } } }
      }
      return workspaceApi(adminSession)({ method, path, body, query: new URLSearchParams() })
    })
    await open(page, `${app.current.url}/console/w/ws1/keys`, "API keys")
    await page.getByRole("link", { name: "Change password" }).click()
    await page.getByRole("heading", { level: 1, name: "Change password" }).waitFor()
    await page.getByLabel("Current password").fill("a wrong one")
    await page.getByLabel("New password", { exact: true }).fill("a brand new passphrase")
    await page.getByLabel("Repeat new password").fill("a brand new passphrase")
    await page.getByRole("button", { name: "Change password" }).click()
    await page.getByText("This is not your current password.").waitFor()
    await checkPage(page, "18-change-password-refused")
    await page.getByLabel("Current password").fill("correct horse battery")
    await page.getByRole("button", { name: "Change password" }).click()
    await page.getByText("Your password was changed. Every other session has ended.").waitFor()
    expect(sent).toEqual([
      { currentPassword: "a wrong one", newPassword: "a brand new passphrase" },
      { currentPassword: "correct horse battery", newPassword: "a brand new passphrase" }
    ])
    await checkPage(page, "18b-change-password")
    await context.close()
  })
})
