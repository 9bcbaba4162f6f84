/**
 * The API reference page (/docs) in Chromium under its Content-Security-Policy: Swagger UI renders every
 * operation, "Try it out" calls the service, and the browser reports no violation of the policy. A
 * screenshot is saved in test/console/screenshots/docs.png.
 */
import { describe, expect, it } from "vitest"
import { useApp } from "../support/app"
import * as path from "node:path"
import { hasChromium, newContext, screenshot, screenshotDir, useBrowser } from "./browser"

describe.skipIf(!hasChromium)("the docs page in Chromium", () => {
  const app = useApp({ BASE_PATH: "/api/public" })
  const browser = useBrowser()

  it("renders under its policy, with no violation, and Try it out reaches the service", async () => {
    const context = await newContext(browser.current)
    const page = await context.newPage()
    const complaints: Array<string> = []
    page.on("console", (message) => {
      // A failed load is checked by its URL below (the browser's own /favicon.ico is a 404 here).
      if (message.text().startsWith("Failed to load resource")) return
      if (message.type() === "error" || /Content Security Policy/i.test(message.text())) complaints.push(message.text())
    })
    const failedLoads: Array<string> = []
    page.on("response", (response) => {
      if (response.status() >= 400 && new URL(response.url()).pathname !== "/favicon.ico") failedLoads.push(`${response.status()} ${response.url()}`)
    })
    page.on("pageerror", (error) => complaints.push(error.message))
    const violations: Array<string> = []
    await page.exposeFunction("reportViolation", (text: string) => void violations.push(text))
    await page.addInitScript(
      "document.addEventListener('securitypolicyviolation', (event) => window.reportViolation(event.violatedDirective + ' ' + event.blockedURI))"
    )
    const answer = await page.goto(`${app.current.url}/docs`)
    expect(answer?.headers()["content-security-policy"]).toContain("script-src 'sha256-")
    // Every operation of the API is listed.
    await page.locator(".opblock").first().waitFor()
    expect(await page.locator(".opblock").count()).toBeGreaterThan(40)
    expect(await page.locator(".info .title").innerText()).toContain("Workspace API")

    // Try it out on the health check: the UI's own request, under connect-src 'self'.
    const health = page.locator(".opblock", { has: page.locator(".opblock-summary-path", { hasText: /^\/healthz$/ }) })
    await health.locator(".opblock-summary").click()
    await health.locator("button.try-out__btn").click()
    await health.locator("button.execute").click()
    await expect.poll(() => health.locator(".live-responses-table tbody .response-col_status").first().innerText()).toContain("200")
    await screenshot(page, "docs")
    // The answer of the health check as the page shows it, and the top of the page, at their real size.
    await health.screenshot({ path: path.join(screenshotDir, "docs-try-it-out.png") })
    await page.evaluate("window.scrollTo(0, 0)")
    await page.screenshot({ path: path.join(screenshotDir, "docs-top.png") })
    expect(violations).toEqual([])
    expect(complaints).toEqual([])
    expect(failedLoads).toEqual([])
    await context.close()
  }, 120_000)
})
