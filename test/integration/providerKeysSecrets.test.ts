import { Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import ProviderAClient from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { SimulatorAddress } from "../../src/simulator/server"
import { simulatorTestLayer } from "../simulator/harness"
import { eventually } from "../support/fakeUpstream"
import { builtEntry } from "../support/builtService"
import { type ServiceProcess, spawnService, waitForOk } from "../support/serviceProcess"

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, "../..")

const adminToken = "secrets-admin-token-0123456789"
const serviceKey = "service-upstream-key-secret-0000"
const workspaceKey = "ws-provider-a-key-secret-1111"
const refusedKey = "ws-refused-key-secret-2222"
const credentialsKey = Buffer.alloc(32, 42).toString("base64")
const nextCredentialsKey = Buffer.alloc(32, 43).toString("hex")

const onlyWith = (key: string) =>
  [{ role: "user" as const, content: `Say something. [simulator expect_key=${createHash("sha256").update(key).digest("hex").slice(0, 32)}]` }]

// The service as users run it (built, on its embedded PostgreSQL, logging at debug), against a simulator
// that knows only the service's key and the workspace's: the workspace's key must reach the upstream and
// nothing else — no log line, error body, export, audit entry or answer.
describe("a workspace's provider key stays secret", () => {
  let service: ServiceProcess
  let base = ""
  let dataDir = ""
  let stopUpstream: () => Promise<void> = async () => {}
  let serviceEnv: Record<string, string> = {}
  const admin = (method: string, route: string, body?: unknown) =>
    fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    }).then(async (response) => ({ status: response.status, text: await response.text() }))

  beforeAll(async () => {
    const scope = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(Layer.buildWithScope(
      simulatorTestLayer({ apiKey: Option.some(Redacted.make(serviceKey)), acceptedKeys: [Redacted.make(workspaceKey)] }),
      scope
    ))
    const { baseUrl } = Effect.runSync(Effect.provide(SimulatorAddress, context))
    stopUpstream = () => Effect.runPromise(Scope.close(scope, Exit.void))
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-provider-keys-"))
    const port = String(await Effect.runPromise(freePort))
    base = `http://127.0.0.1:${port}`
    serviceEnv = {
      DATA_DIR: dataDir,
      PORT: port,
      HOST: "127.0.0.1",
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: "debug",
      CREDENTIALS_KEY: credentialsKey,
      UPSTREAM_PROVIDER_A_EU_URL: baseUrl,
      UPSTREAM_PROVIDER_A_EU_KEY: serviceKey
    }
    service = spawnService(serviceEnv)
    await waitForOk(`${base}/readyz`)
  }, 180_000)

  afterAll(async () => {
    service?.child.kill("SIGTERM")
    await service?.exited
    await stopUpstream()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it("is used upstream, recorded as byok, survives a CREDENTIALS_KEY rotation, and appears in no answer, export, audit entry or log line", async () => {
    const workspace = JSON.parse((await admin("POST", "/admin/workspaces", { name: "Secrets" })).text) as { id: string }
    const refused = await admin("PUT", `/admin/workspaces/${workspace.id}/provider-keys/provider_a`, { apiKey: refusedKey })
    expect(refused.status).toBe(400)
    const saved = await admin("PUT", `/admin/workspaces/${workspace.id}/provider-keys/provider_a`, { apiKey: workspaceKey })
    expect(saved.status).toBe(200)
    const created = await admin("POST", `/admin/workspaces/${workspace.id}/api-keys`, { name: "app", scopes: ["COMPLETION_API", "USAGE_EXPORT_API"] })
    const { key } = JSON.parse(created.text) as { key: string }

    const client = new ProviderAClient({ apiKey: key, baseURL: `${base}/provider_a/eu/v1`, maxRetries: 0 })
    const answer = await client.chat.completions.create({ model: "chatgen-4o-mini", messages: onlyWith(workspaceKey) })
    expect(answer.choices).toHaveLength(1)
    // Refused upstream (the simulator expected another key for this one): 403 in the openai format.
    const refusal = await client.chat.completions.create({ model: "chatgen-4o-mini", messages: onlyWith(serviceKey) }).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(refusal).toBeInstanceOf(ProviderAClient.PermissionDeniedError)
    const refusalBody = JSON.stringify((refusal as InstanceType<typeof ProviderAClient.PermissionDeniedError>).error)
    expect(refusalBody).toContain("provider_key_refused")

    const today = new Date().toISOString().slice(0, 10)
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
    // Both requests recorded (the recorder writes in batches): the export and its file, once they show both.
    const { csv, exported } = await eventually(
      async () => {
        const response = await fetch(`${base}/export/models`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ from: { date: today, timezone: "UTC" }, to: { date: tomorrow, timezone: "UTC" } })
        })
        const text = await response.text()
        if (response.status !== 200) return { exported: text, csv: "" }
        const link = (JSON.parse(text) as { data: { downloadUrl: string } }).data.downloadUrl
        return { exported: text, csv: await (await fetch(link)).text() }
      },
      ({ csv }) => /,api,chatgen-4o-mini,provider_a,eu,2,/.test(csv),
      20_000
    )
    expect(csv.split("\r\n")[0]!.endsWith(",latency_avg_ms,byok,clamped,deployment")).toBe(true)
    // The last cell names the deployment that served them.
    expect(csv).toMatch(/,api,chatgen-4o-mini,provider_a,eu,2,1,.*,true,0,[^,\r\n]*\r\n/)

    const listed = await admin("GET", `/admin/workspaces/${workspace.id}/provider-keys`)
    expect(listed.text).toContain('"last4":"1111"')
    const audit = await admin("GET", `/admin/workspaces/${workspace.id}/audit`)
    expect(audit.text).toContain("provider_key.set")

    // CREDENTIALS_KEY rotated: restarted with the new key and the old one as CREDENTIALS_KEY_PREVIOUS, the
    // CLI re-encrypts every key; restarted with the new key alone, the workspace's key still opens.
    const outputs: Array<{ stdout: string; stderr: string }> = []
    const restart = async (env: Record<string, string>) => {
      service.child.kill("SIGTERM")
      expect(await service.exited).toBe(0)
      outputs.push(service.output())
      service = spawnService({ ...serviceEnv, ...env })
      await waitForOk(`${base}/readyz`)
    }
    await restart({ CREDENTIALS_KEY: nextCredentialsKey, CREDENTIALS_KEY_PREVIOUS: credentialsKey })
    expect((await client.chat.completions.create({ model: "chatgen-4o-mini", messages: onlyWith(workspaceKey) })).choices).toHaveLength(1)
    const rotated = await run(process.execPath, [...builtEntry("cli"), "credentials", "rotate"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", WORKSPACE_API_URL: base, ADMIN_TOKEN: adminToken }
    })
    expect(JSON.parse(rotated.stdout)).toEqual({ resealed: 1, unreadable: [] })
    await restart({ CREDENTIALS_KEY: nextCredentialsKey })
    expect((await client.chat.completions.create({ model: "chatgen-4o-mini", messages: onlyWith(workspaceKey) })).choices).toHaveLength(1)

    service.child.kill("SIGTERM")
    expect(await service.exited).toBe(0)
    outputs.push(service.output())
    const stdout = outputs.map((o) => o.stdout).join("")
    const stderr = outputs.map((o) => o.stderr).join("")
    expect(stdout).toContain('"message":"request"')
    for (const secret of [workspaceKey, refusedKey, serviceKey, credentialsKey, nextCredentialsKey]) {
      for (const [where, text] of [["a provider key answer", saved.text + listed.text], ["the refusals", refused.text + refusalBody], ["the export", exported + csv], ["the audit log", audit.text], ["stdout", stdout], ["stderr", stderr]] as const) {
        expect(text.includes(secret), `${secret} in ${where}`).toBe(false)
      }
    }
  }, 300_000)
})
