import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, expect } from "vitest"

/** Debian's Chromium (`apt-get install chromium`): Playwright's own browser download cannot work on these machines. */
export const chromiumPath = "/usr/bin/chromium"
export const hasChromium = fs.existsSync(chromiumPath)
if (!hasChromium) console.warn(`Browser tests skipped: ${chromiumPath} is absent (apt-get install chromium).`)

/** Where every page's screenshot goes (git-ignored): look at them after a run. */
export const screenshotDir = path.resolve(import.meta.dirname, "screenshots")

/** One headless Chromium for the enclosing describe block. */
export const useBrowser = (): { readonly current: Browser } => {
  const holder: { current: Browser } = { current: undefined as unknown as Browser }
  beforeAll(async () => {
    holder.current = await chromium.launch({
      executablePath: chromiumPath,
      // Without the background-networking flags Chromium keeps dialling out, which this closed network refuses.
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      timeout: 120_000
    })
  }, 180_000)
  afterAll(async () => {
    await holder.current?.close()
  })
  return holder
}

/** A fresh context (own cookies) with a generous timeout: other tests load the same two cores. */
export const newContext = async (browser: Browser, options: { readonly timezoneId?: string } = {}): Promise<BrowserContext> => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, ...options })
  context.setDefaultTimeout(30_000)
  return context
}

export const screenshot = async (page: Page, name: string): Promise<void> => {
  fs.mkdirSync(screenshotDir, { recursive: true })
  await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true })
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string> }>
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, which the page's CSP does not
 * govern) and fails on any serious or critical violation, naming it and where.
 */
export const expectAccessible = async (page: Page, name: string): Promise<void> => {
  await page.evaluate(axeSource)
  const violations = await page.evaluate<ReadonlyArray<AxeViolation>>(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))"
  )
  const serious = violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${name}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
  expect(serious).toEqual([])
}

/** Screenshot and accessibility check of the page as it is now. */
export const checkPage = async (page: Page, name: string): Promise<void> => {
  await screenshot(page, name)
  await expectAccessible(page, name)
}
