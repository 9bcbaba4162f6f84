// `npm run bench:budgets`: what budgets cost a request (issue 30: at most 0.1 ms and 10 % CPU). The floor, the
// service with a workspace and key that have no budget, and the same service build with a workspace budget and a key
// budget (both far from reached, so every request reserves and settles against both), interleaved round by round:
// CPU per request at 32 connections (the service with its embedded PostgreSQL, where the budgets are kept) and the
// p50 at one connection (time to first byte for the stream). BENCH_ROUNDS (3), BENCH_SECONDS (4), BENCH_WARMUP (1);
// BENCH_WRITE=1 writes "Gateway: budgets" in bench/RESULTS.md.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt } from "../../test/support/builtService"
import { writeSection } from "../results"
import { ensureWrk, median, type Request, timeToFirstByte, wrk, wrkWithCpu } from "./load"
import { freePort, pinning, type Started, stop, waitForPort } from "./processes"
import { adminToken, chatBody, failureOf, forwarded, provision, startFloor, startService, startSimulator } from "./targets"

const root = path.resolve(import.meta.dirname, "../..")
const work = path.join(root, "bench/.work/budgets")
const rounds = Number(process.env.BENCH_ROUNDS ?? "3")
const seconds = Number(process.env.BENCH_SECONDS ?? "4")
const warmup = Number(process.env.BENCH_WARMUP ?? "1")
const connections = 32

type Target = "floor" | "service" | "budgets"
const targets: ReadonlyArray<Target> = ["floor", "service", "budgets"]

const workloads = [
  { name: "chat completion JSON", body: chatBody({ stream: false }), stream: false },
  { name: "chat completion stream (20 chunks)", body: chatBody({ stream: true }), stream: true }
]

const admin = async (url: string, method: string, body: unknown): Promise<Record<string, unknown>> => {
  const response = await fetch(url, { method, headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`)
  return (await response.json()) as Record<string, unknown>
}

/** A workspace with a budget and a key with its own, both far from reached: every request reserves against both. */
const provisionWithBudgets = async (serviceUrl: string): Promise<string> => {
  const budget = { amountUsd: 1_000_000, period: "month" }
  const key = await provision(serviceUrl)
  const workspaces = (await (await fetch(`${serviceUrl}/admin/workspaces?search=gateway-bench`, { headers: { authorization: `Bearer ${adminToken}` } })).json()) as {
    data: Array<{ id: string }>
  }
  const workspaceId = workspaces.data[0]!.id
  await admin(`${serviceUrl}/admin/workspaces/${workspaceId}`, "PATCH", { settings: { budget } })
  const keys = (await (await fetch(`${serviceUrl}/admin/workspaces/${workspaceId}/api-keys`, { headers: { authorization: `Bearer ${adminToken}` } })).json()) as {
    data: Array<{ id: string }>
  }
  await admin(`${serviceUrl}/admin/workspaces/${workspaceId}/api-keys/${keys.data[0]!.id}`, "PATCH", { budget })
  return key
}

const main = async (): Promise<void> => {
  ensureBuilt()
  ensureWrk()
  fs.mkdirSync(work, { recursive: true })
  const pin = pinning()
  if (pin.driver.length > 0) execFileSync("taskset", ["-p", "-c", "1", String(process.pid)], { stdio: "ignore" })
  const ports = { simulator: await freePort(), floor: await freePort(), service: await freePort(), budgets: await freePort() }
  const simulatorUrl = `http://127.0.0.1:${ports.simulator}`
  const dataDirs = [fs.mkdtempSync(path.join(os.tmpdir(), "gateway-budgets-a-")), fs.mkdtempSync(path.join(os.tmpdir(), "gateway-budgets-b-"))]
  const started: Array<Started> = []
  try {
    started.push(startSimulator(pin, ports.simulator, path.join(work, "simulator.log")))
    const processes: Record<Target, Started> = {
      floor: startFloor(pin, ports.floor, simulatorUrl, path.join(work, "floor.log")),
      service: startService(pin, { port: ports.service, dataDir: dataDirs[0]!, simulatorUrl }),
      budgets: startService(pin, { name: "service-budgets", port: ports.budgets, dataDir: dataDirs[1]!, simulatorUrl })
    }
    started.push(processes.floor, processes.service, processes.budgets)
    for (const port of Object.values(ports)) await waitForPort(port, 120_000)
    const urlOf = (t: Target) => `http://127.0.0.1:${ports[t]}`
    const keys = { service: await provision(urlOf("service")), budgets: await provisionWithBudgets(urlOf("budgets")) }
    const requestOf = (body: string, t: Target): Request =>
      forwarded(t === "floor" ? { kind: "plain" } : { kind: "service", key: keys[t] }, "chat", body)
    for (const w of workloads) {
      for (const t of targets) {
        const failure = await failureOf(urlOf(t), requestOf(w.body, t))
        if (failure !== undefined) throw new Error(`${t} / ${w.name}: ${failure}`)
      }
    }
    const cpu = new Map<string, Array<number>>()
    const latency = new Map<string, Array<number>>()
    const push = (map: Map<string, Array<number>>, name: string, value: number) => map.set(name, [...(map.get(name) ?? []), value])
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? targets : [...targets].reverse()
      for (const w of workloads) {
        for (const t of order) {
          const request = requestOf(w.body, t)
          if (warmup > 0) await wrk(pin.driver, work, urlOf(t), request, connections, warmup)
          const measured = await wrkWithCpu(pin.driver, work, urlOf(t), request, connections, seconds, processes[t].pid)
          push(cpu, `${w.name}|${t}`, measured.cpuMsPerRequest)
          const p50 = w.stream ? await timeToFirstByte(urlOf(t), request, seconds) : (await wrk(pin.driver, work, urlOf(t), request, 1, seconds)).p50Ms
          push(latency, `${w.name}|${t}`, p50)
          process.stdout.write(`round ${round} ${w.name} ${t}: CPU ${measured.cpuMsPerRequest.toFixed(3)} ms a request, p50 at one connection ${p50.toFixed(3)} ms\n`)
        }
      }
    }
    const lines = [
      `Date: ${new Date().toISOString().slice(0, 10)}. Machine: ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(2)} at the end, Node ${process.version}. ` +
        `${pin.note}; ${rounds} interleaved rounds; CPU per request at ${connections} connections (the service with its embedded PostgreSQL), p50 at one connection ` +
        "(time to first byte for the stream). Budgets: a workspace budget and a key budget, far from reached.",
      "",
      "| workload | floor CPU ms | service CPU ms | with budgets CPU ms | budgets ÷ service CPU | p50 service ms | p50 with budgets ms | added ms |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |"
    ]
    for (const w of workloads) {
      const m = (t: Target, map: Map<string, Array<number>>) => median(map.get(`${w.name}|${t}`)!)
      lines.push(
        `| ${w.name} | ${m("floor", cpu).toFixed(3)} | ${m("service", cpu).toFixed(3)} | ${m("budgets", cpu).toFixed(3)} | ` +
          `${(m("budgets", cpu) / m("service", cpu)).toFixed(3)} | ${m("service", latency).toFixed(3)} | ${m("budgets", latency).toFixed(3)} | ` +
          `${(m("budgets", latency) - m("service", latency)).toFixed(3)} |`
      )
    }
    const body = lines.join("\n")
    process.stdout.write(`\n${body}\n`)
    if (process.env.BENCH_WRITE === "1") writeSection("Gateway: budgets", body)
  } finally {
    for (const s of started.reverse()) await stop(s)
    for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true })
  }
}

await main()
