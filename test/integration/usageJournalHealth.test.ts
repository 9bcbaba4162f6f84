import ProviderAClient from "openai"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database"
import { eventually } from "../support/fakeUpstream"
import { parsePrometheusText } from "../support/prometheusText"
import { canMakeReadOnly, makeReadOnly } from "../support/refusingDisk"
import { call, createKey, createWorkspace, type RunningApp, startApp } from "../support/app"

/**
 * The usage journal's health, seen from outside (issue 25, finding 5): its folder made read-only under a
 * running service (a read-only bind mount as root), then writable again. /readyz and /metrics say so; with
 * USAGE_JOURNAL_REQUIRED=true billable requests are refused in their endpoint's format meanwhile, without
 * it they are answered (their records wait in memory and reach the journal once it takes them again).
 */

interface Service {
  readonly app: RunningApp
  readonly client: ProviderAClient
  readonly workspaceId: string
  readonly journal: string
}

const serve = async (env: Record<string, string>): Promise<Service> => {
  const app = await startApp(env, { stores: "postgres" })
  const workspace = await createWorkspace(app)
  const { key } = await createKey(app, workspace.id, ["COMPLETION_API"])
  return {
    app,
    client: new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 }),
    workspaceId: workspace.id,
    journal: path.join(app.env.DATA_DIR!, "usage-journal")
  }
}

const readyz = (service: Service) => call(service.app, "GET", "/readyz")
const writableGauge = async (service: Service) =>
  parsePrometheusText((await call(service.app, "GET", "/metrics")).body as string).sum("wsapi_usage_journal_writable")
const chat = (service: Service, content: string) =>
  service.client.chat.completions.create({ model: "chatgen-4o", messages: [{ role: "user", content }], max_tokens: 16 }).withResponse()
const ledgerRequestIds = async (service: Service) =>
  (await query<{ request_id: string }>(service.app.env.DATABASE_URL!, "SELECT request_id FROM api_requests WHERE workspace_id = $1", [service.workspaceId]))
    .map((row) => row.request_id)

describe.skipIf(!canMakeReadOnly)("the usage journal's health", () => {
  let required: Service
  let tolerant: Service
  const restores: Array<() => void> = []

  beforeAll(async () => {
    ;[required, tolerant] = await Promise.all([serve({ USAGE_JOURNAL_REQUIRED: "true" }), serve({})])
  })
  afterAll(async () => {
    for (const restore of restores.splice(0)) restore()
    await Promise.all([required?.app.stop(), tolerant?.app.stop()])
  })

  it("is reported ok and writable while the journal takes records", async () => {
    for (const service of [required, tolerant]) {
      const ready = await readyz(service)
      expect(ready.status).toBe(200)
      expect(ready.body).toMatchObject({ status: "ready", journal: "ok" })
      expect(await writableGauge(service)).toBe(1)
    }
  })

  it("with USAGE_JOURNAL_REQUIRED=true: readyz 503 naming the journal, gauge 0, billable requests 503 in their format; then recovers", async () => {
    const restore = makeReadOnly(required.journal)
    restores.push(restore)
    // Noticed while idle, without a request having to fail first.
    const unready = await eventually(() => readyz(required), (answer) => answer.status === 503)
    expect(unready.body).toMatchObject({ status: "unavailable", journal: "failing", reason: expect.stringContaining("usage journal") })
    expect(await writableGauge(required)).toBe(0)

    const refused = await chat(required, "refused").then(() => undefined, (error: unknown) => error)
    expect(refused).toBeInstanceOf(ProviderAClient.APIError)
    const apiError = refused as InstanceType<typeof ProviderAClient.APIError>
    expect(apiError.status).toBe(503)
    expect(apiError.code).toBe("usage_recording_unavailable")
    expect(apiError.headers?.get("retry-after")).toBe("5")
    // Not billable: a model list still answers.
    expect((await required.client.models.list()).data.length).toBeGreaterThan(0)

    restores.splice(restores.indexOf(restore), 1)
    restore()
    await eventually(() => readyz(required), (answer) => answer.status === 200, 15_000)
    expect((await readyz(required)).body).toMatchObject({ journal: "ok" })
    expect(await writableGauge(required)).toBe(1)
    const { response } = await chat(required, "after")
    const requestId = response.headers.get("x-request-id")!
    await eventually(() => ledgerRequestIds(required), (ids) => ids.includes(requestId))
  }, 60_000)

  it("without it: readyz stays 200 saying the journal fails, gauge 0, requests answered and recorded; then recovers", async () => {
    const restore = makeReadOnly(tolerant.journal)
    restores.push(restore)
    const failing = await eventually(() => readyz(tolerant), (answer) => answer.body.journal === "failing")
    expect(failing.status).toBe(200)
    expect(await writableGauge(tolerant)).toBe(0)

    const answered = await Promise.all([chat(tolerant, "one"), chat(tolerant, "two")])
    const ids = answered.map(({ response }) => response.headers.get("x-request-id")!)
    // Kept in memory meanwhile, and written to the ledger (which is there).
    await eventually(() => ledgerRequestIds(tolerant), (stored) => ids.every((id) => stored.includes(id)))

    restores.splice(restores.indexOf(restore), 1)
    restore()
    await eventually(() => readyz(tolerant), (answer) => answer.body.journal === "ok", 15_000)
    expect(await writableGauge(tolerant)).toBe(1)
    const { response } = await chat(tolerant, "after")
    const requestId = response.headers.get("x-request-id")!
    await eventually(() => ledgerRequestIds(tolerant), (stored) => stored.includes(requestId))
  }, 60_000)
})
