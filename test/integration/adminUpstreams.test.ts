/**
 * GET /admin/upstreams and `npm run cli -- upstreams` on the whole service: every route's deployment listed
 * with its state, and a deployment that fails (nothing listens at its address) cooling, with the service's
 * own words for why and the failure counted. The official client library is the one calling.
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { promisify } from "node:util"
import ProviderAClient from "openai"
import { describe, expect, it } from "vitest"
import { builtEntry } from "../support/builtService"
import { call, createKey, createWorkspace, testAdminToken, useApp } from "../support/app"

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, "../..")

/** Nothing listens on port 1: every connection is refused. */
const closedPort = "http://127.0.0.1:1"
const upstreamKey = "upstream-secret-key-0123456789"

interface Listed {
  readonly route: string
  readonly deployment: string
  readonly kind: string
  readonly state: string
  readonly coolingUntil?: string
  readonly lastError?: string
  readonly requests: number
  readonly failures: number
}

describe("GET /admin/upstreams", () => {
  const app = useApp({ UPSTREAM_PROVIDER_A_EU_URL: closedPort, UPSTREAM_PROVIDER_A_EU_KEY: upstreamKey })

  const upstreams = async (): Promise<ReadonlyArray<Listed>> => {
    const answer = await call(app.current, "GET", "/admin/upstreams", { token: testAdminToken })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return answer.body.data
  }
  const find = (list: ReadonlyArray<Listed>, deployment: string): Listed => {
    const found = list.find((d) => d.deployment === deployment)
    expect(found, `${deployment} in ${JSON.stringify(list)}`).toBeDefined()
    return found!
  }

  it("is the operator's: 401 without the admin token or with another", async () => {
    expect((await call(app.current, "GET", "/admin/upstreams")).status).toBe(401)
    const workspace = await createWorkspace(app.current)
    const key = await createKey(app.current, workspace.id, ["COMPLETION_API", "USAGE_EXPORT_API"])
    expect((await call(app.current, "GET", "/admin/upstreams", { token: key.key })).status).toBe(401)
  })

  it("lists every route's deployment, available before anything failed", async () => {
    const list = await upstreams()
    expect(list.map((d) => [d.route, d.deployment, d.kind, d.state])).toEqual([
      ["provider_a/eu", "provider_a-eu", "native", "available"],
      ["provider_a/us", "simulator-provider_a-us", "native", "available"],
      ["provider_b/eu", "simulator-provider_b-eu", "native", "available"],
      ["provider_b/us", "simulator-provider_b-us", "native", "available"],
      ["provider_c/eu", "simulator-provider_c-eu", "native", "available"]
    ])
    for (const deployment of list) {
      expect(deployment).not.toHaveProperty("coolingUntil")
      expect(deployment).not.toHaveProperty("lastError")
    }
  })

  it("shows a deployment that failed as cooling, with the service's words for why and the failure counted", async () => {
    const workspace = await createWorkspace(app.current)
    const key = (await createKey(app.current, workspace.id, ["COMPLETION_API"])).key
    const ask = (region: string) =>
      new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/${region}/v1`, maxRetries: 0 }).chat.completions.create({
        model: "chatgen-4o-mini",
        messages: [{ role: "user", content: "hello" }]
      })
    await expect(ask("eu")).rejects.toMatchObject({ status: expect.any(Number) })
    // The simulator's route answers: counted, not cooling.
    expect((await ask("us")).choices.length).toBeGreaterThan(0)

    const before = Date.now()
    const list = await upstreams()
    const failed = find(list, "provider_a-eu")
    expect(failed).toMatchObject({ route: "provider_a/eu", kind: "native", state: "cooling", requests: 1, failures: 1 })
    // The service's words: the socket's error code, neither the upstream's address nor its key.
    expect(failed.lastError).toBe("unreachable: ECONNREFUSED")
    const until = Date.parse(failed.coolingUntil ?? "")
    expect(until).toBeGreaterThan(before)
    expect(until).toBeLessThanOrEqual(before + 31_000)
    expect(find(list, "simulator-provider_a-us")).toEqual({
      route: "provider_a/us", deployment: "simulator-provider_a-us", kind: "native", state: "available", requests: 1, failures: 0
    })

    // The CLI prints the same answer.
    const { stdout } = await run(process.execPath, [...builtEntry("cli"), "upstreams"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", WORKSPACE_API_URL: app.current.url, ADMIN_TOKEN: testAdminToken }
    })
    const printed = JSON.parse(stdout) as { data: ReadonlyArray<Listed> }
    expect(find(printed.data, "provider_a-eu")).toMatchObject({ state: "cooling", failures: 1, lastError: failed.lastError })
  }, 60_000)
})
