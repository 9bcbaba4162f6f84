import { spawn, type ChildProcess } from "node:child_process"
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { builtEntry } from "../support/builtService"
import { freshDatabaseUrl } from "../support/database"
import { eventually } from "../support/fakeUpstream"
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlpReceiver"
import { type ServiceProcess, spawnService, waitForOk } from "../support/serviceProcess"

const root = path.resolve(import.meta.dirname, "../..")
const adminToken = "traces-admin-token-0123456789"

/** The built simulator on its own port, behind a relay that records the headers of every request it is sent. */
const startRecordedSimulator = async () => {
  const simulatorPort = await Effect.runPromise(freePort)
  const simulator: ChildProcess = spawn(process.execPath, builtEntry("simulator"), {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", SIMULATOR_PORT: String(simulatorPort) },
    stdio: ["ignore", "ignore", "inherit"]
  })
  const received: Array<http.IncomingHttpHeaders> = []
  const relay = http.createServer((request, response) => {
    received.push(request.headers)
    const forwarded = http.request(
      { host: "127.0.0.1", port: simulatorPort, method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      }
    )
    forwarded.on("error", () => response.destroy())
    request.pipe(forwarded)
  })
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve))
  await eventually(() => fetch(`http://127.0.0.1:${simulatorPort}/provider_a/v1/models`).then(() => true, () => false), (up) => up, 30_000)
  return {
    url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    received,
    stop: async () => {
      simulator.kill("SIGTERM")
      relay.closeAllConnections()
      await new Promise<void>((resolve) => relay.close(() => resolve()))
    }
  }
}

const startService = async (upstreamUrl: string, env: Record<string, string>) => {
  const port = await Effect.runPromise(freePort)
  const service = spawnService({
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: `/tmp/ws-traces-${crypto.randomBytes(6).toString("hex")}`,
    DATABASE_URL: await freshDatabaseUrl(),
    ADMIN_TOKEN: adminToken,
    UPSTREAM_PROVIDER_A_EU_URL: upstreamUrl,
    UPSTREAM_PROVIDER_A_EU_KEY: "upstream-key-traces",
    ...env
  })
  const base = `http://127.0.0.1:${port}`
  await waitForOk(`${base}/readyz`)
  const admin = { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }
  const workspace = await (await fetch(`${base}/admin/workspaces`, { method: "POST", headers: admin, body: JSON.stringify({ name: "traced" }) })).json() as { id: string }
  const { key } = await (await fetch(`${base}/admin/workspaces/${workspace.id}/api-keys`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ name: "k", scopes: ["COMPLETION_API", "USAGE_EXPORT_API"] })
  })).json() as { key: string }
  return { service, base, key }
}

const chat = (base: string, key: string, headers: Record<string, string> = {}, stream = false) =>
  fetch(`${base}/provider_a/eu/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "chatgen-4o-mini", stream, messages: [{ role: "user", content: "hello" }] })
  }).then(async (answer) => ({ status: answer.status, text: await answer.text() }))

const stopService = async (service: ServiceProcess) => {
  service.child.kill("SIGTERM")
  await service.exited
}

const randomHex = (bytes: number) => crypto.randomBytes(bytes).toString("hex")
const childrenOf = (spans: ReadonlyArray<ReceivedSpan>, parent: ReceivedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId)
const attribute = (span: ReceivedSpan, key: string) => span.attributes.find((a) => a.key === key)?.value

describe("traces over OTLP/HTTP, from the built service to a local receiver", () => {
  let upstream: Awaited<ReturnType<typeof startRecordedSimulator>>
  let receiver: OtlpReceiver
  let running: Awaited<ReturnType<typeof startService>>

  beforeAll(async () => {
    upstream = await startRecordedSimulator()
    receiver = await startOtlpReceiver()
    // The default sampler (parentbased_always_on): a caller's sampled flag is followed.
    running = await startService(upstream.url, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: "x-collector-token=tok%3D1,other=two",
      OTEL_SERVICE_NAME: "wsapi-traces-test",
      OTEL_BSP_SCHEDULE_DELAY: "200"
    })
  }, 180_000)
  afterAll(async () => {
    if (running) await stopService(running.service)
    await receiver?.close()
    await upstream?.stop()
  })

  it("continues the caller's trace: a server span with auth, rate limit, upstream exchange (first byte) and usage write under it", async () => {
    const traceId = randomHex(16)
    const callerSpanId = randomHex(8)
    const answer = await chat(running.base, running.key, { traceparent: `00-${traceId}-${callerSpanId}-01` })
    expect(answer.status).toBe(200)

    const spans = await eventually(
      () => receiver.spans.filter((span) => span.traceId === traceId),
      (found) => found.some((span) => span.name === "usage.record"),
      15_000
    )
    const server = spans.find((span) => span.parentSpanId === callerSpanId)!
    expect(server).toMatchObject({ name: "POST /provider_a/{region}/v1/chat/completions", kind: 2 })
    expect(attribute(server, "http.response.status_code")).toEqual({ intValue: 200 })
    // Beside the database's own spans (the workspace's provider key looked up), one of each step.
    const steps = childrenOf(spans, server).map((span) => span.name).filter((name) => name !== "sql.execute")
    expect(steps.sort()).toEqual(["auth", "rate_limit", "upstream.exchange", "usage.record"])
    const exchange = spans.find((span) => span.name === "upstream.exchange")!
    expect(exchange.kind).toBe(3)
    expect(exchange.events.map((event) => event.name)).toEqual(["first_byte"])
    const firstByte = BigInt(exchange.events[0]!.timeUnixNano)
    expect(firstByte >= BigInt(exchange.startTimeUnixNano) && firstByte <= BigInt(exchange.endTimeUnixNano)).toBe(true)

    // The upstream was told it works for the exchange's span, in the same trace.
    const sent = upstream.received.filter((headers) => headers.traceparent?.includes(traceId))
    expect(sent.map((headers) => headers.traceparent)).toEqual([`00-${traceId}-${exchange.spanId}-01`])
    expect(receiver.posts.every((post) => post.path === "/v1/traces" && post.serviceName === "wsapi-traces-test")).toBe(true)
    expect(receiver.posts[0]!.headers["x-collector-token"]).toBe("tok=1")
  })

  it("starts a trace of its own without a traceparent, and follows a caller's unsampled flag (nothing exported, flag passed on)", async () => {
    const before = upstream.received.length
    expect((await chat(running.base, running.key, {}, true)).status).toBe(200)
    const started = String(upstream.received[before]!.traceparent)
    const [, ownTrace, , flags] = started.split("-")
    expect(flags).toBe("01")
    await eventually(() => receiver.spans.filter((span) => span.traceId === ownTrace), (found) => found.some((span) => span.name === "usage.record"), 15_000)
    const root = receiver.spans.find((span) => span.traceId === ownTrace && span.parentSpanId === undefined)
    expect(root?.name).toBe("POST /provider_a/{region}/v1/chat/completions")

    const unsampledTrace = randomHex(16)
    expect((await chat(running.base, running.key, { traceparent: `00-${unsampledTrace}-${randomHex(8)}-00` })).status).toBe(200)
    const passed = upstream.received.find((headers) => headers.traceparent?.includes(unsampledTrace))
    expect(passed?.traceparent).toMatch(new RegExp(`^00-${unsampledTrace}-[0-9a-f]{16}-00$`))
    // A sampled request after it: its spans are exported after any the unsampled one could have had.
    const laterTrace = randomHex(16)
    expect((await chat(running.base, running.key, { traceparent: `00-${laterTrace}-${randomHex(8)}-01` })).status).toBe(200)
    await eventually(() => receiver.spans.filter((span) => span.traceId === laterTrace), (found) => found.some((span) => span.name === "usage.record"), 15_000)
    expect(receiver.spans.filter((span) => span.traceId === unsampledTrace)).toEqual([])
  })

  it("traces an export's phases under the request's span", async () => {
    const day = (offset: number) => `${new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)}T00:00:00`
    const traceId = randomHex(16)
    const answer = await eventually(
      () =>
        fetch(`${running.base}/export/models`, {
          method: "POST",
          headers: { authorization: `Bearer ${running.key}`, "content-type": "application/json", traceparent: `00-${traceId}-${randomHex(8)}-01` },
          body: JSON.stringify({ from: { date: day(-1), timezone: "UTC" }, to: { date: day(1), timezone: "UTC" } })
        }).then((response) => response.status),
      // The usage of the requests above is written in batches: retried until it is there.
      (status) => status === 200,
      15_000
    )
    expect(answer).toBe(200)
    const spans = await eventually(
      () => receiver.spans.filter((span) => span.traceId === traceId),
      (found) => found.some((span) => span.name === "export.run"),
      15_000
    )
    const run = spans.find((span) => span.name === "export.run")!
    expect(childrenOf(spans, run).map((span) => span.name)).toEqual(expect.arrayContaining(["export.count", "export.write", "export.link", "export.record"]))
    const server = spans.find((span) => span.spanId === run.parentSpanId)!
    expect(server.kind).toBe(2)
    expect(childrenOf(spans, server).map((span) => span.name)).toEqual(expect.arrayContaining(["auth", "rate_limit", "export.run"]))
  })
})

describe("traces without an OTLP endpoint", () => {
  let upstream: Awaited<ReturnType<typeof startRecordedSimulator>>
  let running: Awaited<ReturnType<typeof startService>>
  // The OTLP default port: a service that exported by default would post here.
  let receiver: OtlpReceiver | undefined

  beforeAll(async () => {
    upstream = await startRecordedSimulator()
    receiver = await startOtlpReceiver(4318).catch(() => undefined)
    running = await startService(upstream.url, { OTEL_SERVICE_NAME: "wsapi-untraced", OTEL_TRACES_SAMPLER: "always_on", OTEL_BSP_SCHEDULE_DELAY: "200" })
  }, 180_000)
  afterAll(async () => {
    if (running) await stopService(running.service)
    await receiver?.close()
    await upstream?.stop()
  })

  it("exports nothing and passes no traceparent upstream, even when the caller sent one", async () => {
    expect((await chat(running.base, running.key, { traceparent: `00-${randomHex(16)}-${randomHex(8)}-01` })).status).toBe(200)
    expect(upstream.received.length).toBeGreaterThan(0)
    expect(upstream.received.every((headers) => headers.traceparent === undefined)).toBe(true)
    await stopService(running.service)
    expect(receiver?.posts ?? []).toEqual([])
  })
})
