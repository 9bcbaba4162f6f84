import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { startApp, useApp } from "../support/app"

/** The console's files as the service serves them (globalSetup runs scripts/build.mjs, whose "web" step builds them). */
const built = fs.existsSync("dist/web/index.html")

describe.skipIf(!built)("web console files", () => {
  const app = useApp({ BASE_PATH: "/api/public" }, { stores: "postgres" })

  it("serves the app's page at /console/ with a <base> under BASE_PATH and a strict Content-Security-Policy", async () => {
    const response = await fetch(`${app.current.url}/console/`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
    const csp = response.headers.get("content-security-policy") ?? ""
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain("unsafe-inline")
    expect(response.headers.get("cache-control")).toBe("no-cache")
    const html = await response.text()
    expect(html).toContain('<base href="/api/public/console/">')
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    expect(html).not.toMatch(/https?:\/\//)
  })

  it("answers the app's routes (deep links) with the same page", async () => {
    for (const route of ["login", "invitations/abc123", "w/some-id/keys"]) {
      const response = await fetch(`${app.current.url}/console/${route}`)
      expect(response.status).toBe(200)
      expect(await response.text()).toContain('id="app"')
    }
  })

  it("serves hashed assets with their content type, immutable; a missing one is 404", async () => {
    const html = await (await fetch(`${app.current.url}/console/`)).text()
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1]
    expect(script).toBeDefined()
    const response = await fetch(`${app.current.url}/console/${script}`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect((await fetch(`${app.current.url}/console/assets/gone-1234.js`)).status).toBe(404)
  })

  it("redirects /console to /console/ and leaves /console/api/ to the API", async () => {
    const bare = await fetch(`${app.current.url}/console`, { redirect: "manual" })
    expect(bare.status).toBe(308)
    expect(bare.headers.get("location")).toBe("/api/public/console/")
    const api = await fetch(`${app.current.url}/console/api/no-such-thing`)
    expect(api.headers.get("content-type") ?? "").not.toContain("text/html")
  })

  it("does not serve the console outside BASE_PATH", async () => {
    expect((await fetch(`${app.current.origin}/console/`)).status).toBe(404)
  })
})

describe.skipIf(!built)("web console files without BASE_PATH", () => {
  it("serves /console/ at the root", async () => {
    const app = await startApp({}, { stores: "postgres" })
    try {
      const html = await (await fetch(`${app.url}/console/login`)).text()
      expect(html).toContain('<base href="/console/">')
    } finally {
      await app.stop()
    }
  })
})
