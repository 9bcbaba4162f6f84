import * as crypto from "node:crypto"
import { describe, expect, it } from "vitest"
import { docsContentSecurityPolicy } from "../../src/http/docsPage"
import { useApp } from "../support/app"

const hashOf = (text: string) => `'sha256-${crypto.createHash("sha256").update(text, "utf8").digest("base64")}'`

describe("the docs page's Content-Security-Policy", () => {
  const app = useApp({ BASE_PATH: "/api/public" })

  it("allows exactly the page's own inline script and style, by hash, and nothing from elsewhere", async () => {
    const answer = await fetch(`${app.current.url}/docs`)
    expect(answer.status).toBe(200)
    const html = await answer.text()
    const policy = answer.headers.get("content-security-policy") ?? ""
    const directives = new Map(policy.split("; ").map((directive) => [directive.split(" ")[0]!, directive.split(" ").slice(1)]))
    // The page's executable script is the one <script> without a type (the spec sits in a JSON data block).
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1]
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1]
    expect(script?.length).toBeGreaterThan(1000)
    expect(directives.get("script-src")).toEqual([hashOf(script!)])
    expect(directives.get("style-src")).toEqual([hashOf(style!)])
    expect(directives.get("default-src")).toEqual(["'none'"])
    expect(directives.get("connect-src")).toEqual(["'self'"])
    expect(directives.get("frame-ancestors")).toEqual(["'none'"])
    expect(policy).not.toContain("unsafe")
    expect(answer.headers.get("referrer-policy")).toBe("no-referrer")
    // The same policy on every request; other answers carry none of it.
    expect((await fetch(`${app.current.url}/docs`)).headers.get("content-security-policy")).toBe(policy)
    expect((await fetch(`${app.current.url}/openapi.json`)).headers.get("content-security-policy")).toBeNull()
  })

  it("hashes every executable inline script and no data block", () => {
    const policy = docsContentSecurityPolicy(
      `<style>a{}</style><script type="application/json">{"x":1}</script><script>one()</script><script src="/x.js"></script><script type="module">two()</script>`
    )
    expect(policy).toContain(`script-src ${hashOf("one()")} ${hashOf("two()")};`)
    expect(policy).toContain(`style-src ${hashOf("a{}")};`)
  })
})
