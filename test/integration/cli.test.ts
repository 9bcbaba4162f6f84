import { execFile } from "node:child_process"
import * as path from "node:path"
import { promisify } from "node:util"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { builtEntry } from "../support/builtService"
import { call, testAdminToken, useApp } from "../support/app"

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, "../..")

describe("operator CLI", () => {
  const app = useApp({ BASE_PATH: "/api/public" }, { stores: "postgres" })

  const cliWith = async (env: Record<string, string>, ...args: Array<string>) => {
    try {
      const { stdout } = await run(process.execPath, [...builtEntry("cli"), ...args], {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", WORKSPACE_API_URL: app.current.url, ADMIN_TOKEN: testAdminToken, ...env }
      })
      return { code: 0, stdout, stderr: "" }
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string }
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
    }
  }
  const cli = (...args: Array<string>) => cliWith({}, ...args)

  it("creates a workspace and a key that the API then accepts, lists and revokes", async () => {
    const created = await cli("workspace", "create", "--name", "From CLI", "--settings", '{"anonymizeUsers":true}')
    expect(created.code).toBe(0)
    const workspace = JSON.parse(created.stdout) as { id: string; settings: { anonymizeUsers: boolean } }
    expect(workspace.settings.anonymizeUsers).toBe(true)

    const key = JSON.parse((await cli("key", "create", workspace.id, "--name", "k", "--scopes", "USAGE_EXPORT_API")).stdout) as {
      id: string
      key: string
    }
    const exportBody = { from: { date: "2026-01-01", timezone: "UTC" }, to: { date: "2026-01-02", timezone: "UTC" } }
    expect((await call(app.current, "POST", "/export/users", { token: key.key, body: exportBody })).status).not.toBe(401)

    const listed = JSON.parse((await cli("key", "list", workspace.id)).stdout) as { data: Array<{ id: string }> }
    expect(listed.data.map((k) => k.id)).toEqual([key.id])
    expect((await cli("key", "revoke", workspace.id, key.id)).code).toBe(0)
    const updated = JSON.parse((await cli("workspace", "update", workspace.id, "--name", "Renamed")).stdout) as { name: string }
    expect(updated.name).toBe("Renamed")
  }, 60_000)

  it("invites, lists, changes and removes members, lists workspaces and reads the audit log", async () => {
    const workspace = JSON.parse((await cli("workspace", "create", "--name", "Members from CLI")).stdout) as { id: string }
    const invited = JSON.parse((await cli("member", "invite", workspace.id, "--email", "cli@example.com", "--role", "admin")).stdout) as {
      id: string
      invitationUrl: string
      status: string
    }
    expect(invited.status).toBe("invited")
    expect(invited.invitationUrl).toContain("/api/public/console/invitations/")
    const second = JSON.parse((await cli("member", "invite", workspace.id, "--email", "two@example.com", "--role", "member")).stdout) as { id: string }
    expect(JSON.parse((await cli("member", "role", workspace.id, second.id, "--role", "admin")).stdout)).toMatchObject({ role: "admin" })
    expect((await cli("member", "remove", workspace.id, second.id)).code).toBe(0)
    const listed = JSON.parse((await cli("member", "list", workspace.id)).stdout) as { data: Array<{ email: string }> }
    expect(listed.data.map((m) => m.email)).toEqual(["cli@example.com"])
    const found = JSON.parse((await cli("workspace", "list", "--search", "members from", "--limit", "5")).stdout) as { data: Array<{ id: string }> }
    expect(found.data.map((w) => w.id)).toEqual([workspace.id])
    const audit = JSON.parse((await cli("audit", workspace.id, "--action", "member.removed")).stdout) as { data: Array<{ target: string }> }
    expect(audit.data).toEqual([expect.objectContaining({ actor: "operator", target: "two@example.com" })])
    // The operator's password-reset link for a person with an account; none for an email without one.
    const accepted = await fetch(`${app.current.url}/console/api/invitations/${invited.invitationUrl.split("/").at(-1)}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: app.current.origin },
      body: JSON.stringify({ password: "correct horse battery staple" })
    })
    expect(accepted.status).toBe(200)
    const reset = await cli("person", "reset-password", "--email", "cli@example.com")
    expect(reset.code).toBe(0)
    expect(JSON.parse(reset.stdout)).toEqual({ resetUrl: expect.stringContaining("/api/public/console/password-resets/"), expiresAt: expect.any(String) })
    const noAccount = await cli("person", "reset-password", "--email", "nobody@example.com")
    expect(noAccount.code).toBe(1)
    expect(noAccount.stderr).toContain("404")
    expect((await cli("person", "reset-password")).stderr).toContain("--email")
    const badRole = await cli("member", "invite", workspace.id, "--email", "x@example.com", "--role", "owner")
    expect(badRole.code).toBe(1)
    expect(badRole.stderr).toContain("--role")
  }, 120_000)

  it("fails with a clear message and status 1 on bad input", async () => {
    const badScopes = await cli("key", "create", "00000000-0000-0000-0000-000000000000", "--name", "k", "--scopes", "ROOT")
    expect(badScopes.code).toBe(1)
    expect(badScopes.stderr).toContain("--scopes")
    const missing = await cli("workspace", "get", "00000000-0000-0000-0000-000000000000")
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("404")
    const unknown = await cli("frobnicate")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("usage:")
  }, 60_000)

  describe("when the call goes astray, says in one line what went wrong and what to check", () => {
    /** Something else than the service on a loopback port: answers every request with `answer`. */
    const servers: Array<http.Server> = []
    const otherServer = async (answer: (response: http.ServerResponse) => void): Promise<string> => {
      const server = http.createServer((_request, response) => answer(response))
      servers.push(server)
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    }
    afterAll(async () => {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
    })
    const closedPort = async (): Promise<string> => {
      const url = await otherServer(() => {})
      await new Promise((resolve) => servers.pop()!.close(resolve))
      return url
    }

    const checkUrl = "check WORKSPACE_API_URL: the service's address with its BASE_PATH"
    const cases: ReadonlyArray<readonly [what: string, env: () => Promise<Record<string, string>>, line: RegExp]> = [
      ["nothing listens there", async () => ({ WORKSPACE_API_URL: await closedPort() }), /^cannot reach http:\/\/127\.0\.0\.1:\d+: connection refused \(is the service running there\?\); check WORKSPACE_API_URL/],
      ["the URL lacks BASE_PATH", async () => ({ WORKSPACE_API_URL: app.current.origin }), /^404: No endpoint GET \/admin\/workspaces\. — check WORKSPACE_API_URL/],
      ["the token is wrong", async () => ({ ADMIN_TOKEN: "not-the-admin-token-at-all" }), /^401: .* — check ADMIN_TOKEN \(default: adminToken in DATA_DIR\/secrets\.json/],
      [
        "an HTML page answers",
        async () => ({ WORKSPACE_API_URL: await otherServer((r) => r.writeHead(200, { "content-type": "text/html" }).end("<html></html>")) }),
        /^GET http:\/\/127\.0\.0\.1:\d+\/admin\/workspaces answered 200 text\/html, not the service's JSON: check WORKSPACE_API_URL/
      ],
      [
        "an empty 404 answers",
        async () => ({ WORKSPACE_API_URL: await otherServer((r) => r.writeHead(404).end()) }),
        /answered 404 without a content type, not the service's JSON: check WORKSPACE_API_URL/
      ],
      [
        "JSON of another shape answers",
        async () => ({ WORKSPACE_API_URL: await otherServer((r) => r.writeHead(200, { "content-type": "application/json" }).end('{"hello":"world"}')) }),
        /^http:\/\/127\.0\.0\.1:\d+ answered JSON that is not the admin API's answer: check WORKSPACE_API_URL/
      ],
      ["the URL is not one", async () => ({ WORKSPACE_API_URL: "localhost 8080" }), /^localhost 8080\/admin\/workspaces is not a URL: check WORKSPACE_API_URL/]
    ]

    for (const [what, env, line] of cases) {
      it(what, async () => {
        const result = await cliWith(await env(), "workspace", "list")
        expect(result.code).toBe(1)
        expect(result.stdout).toBe("")
        const lines = result.stderr.trim().split("\n")
        expect(lines).toEqual([expect.stringMatching(line)])
        if (what !== "the token is wrong") expect(lines[0]).toContain(checkUrl)
      }, 30_000)
    }

    it("the seed and export commands (their own calls) say it the same way", async () => {
      const html = await otherServer((r) => r.writeHead(502, { "content-type": "text/html" }).end("<html>Bad gateway</html>"))
      const seeded = await cliWith({ WORKSPACE_API_URL: html }, "seed", "00000000-0000-0000-0000-000000000000", "--events", "5", "--days", "1")
      expect(seeded.code).toBe(1)
      expect(seeded.stderr.trim().split("\n").at(-1)).toMatch(/^POST http:.*\/events answered 502 text\/html, not the service's JSON: check WORKSPACE_API_URL/)
      const exported = await cliWith({}, "export", "users", "--key", "wsk_notakey", "--from", "2026-01-01", "--to", "2026-01-02")
      expect(exported.code).toBe(1)
      expect(exported.stderr.trim().split("\n").at(-1)).toMatch(/^401: .* — check the key \(--key or WORKSPACE_API_KEY\)/)
    }, 30_000)
  })
})

