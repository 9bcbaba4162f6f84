// `npm run bench:allocations`: bytes the service allocates a forwarded request, per workload. Allocation is what the
// young generation has to scavenge (npm start keeps it small), so it is the measure the request path's changes are
// judged by besides CPU time, and unlike CPU time it does not drift with the machine. The built service runs with its
// allocations sampled (allocationSampler.mjs, V8's sampling heap profiler counting the objects collections free too);
// per workload: a warm-up, then sampling over BENCH_REQUESTS requests at 32 at once, the sampled bytes divided by the
// requests, and the functions that allocate most (the service's own and their callees, through the source maps).
// BENCH_REQUESTS (20000), BENCH_TOP (15), BENCH_WORKLOADS (all four), BENCH_WRITE=1 writes "Gateway: allocations a
// request" in bench/RESULTS.md (printed only otherwise).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Pool } from "undici"
import { ensureBuilt } from "../../test/support/builtService"
import { writeSection } from "../results"
import { summariseAllocations } from "./profileSummary"
import { freePort, pinning, type Started, stop, waitForPort } from "./processes"
import { failureOf, forwarded, gatewayWorkloads, provision, startService, startSimulator } from "./targets"

const root = path.resolve(import.meta.dirname, "../..")
const work = path.join(root, "bench/.work/allocations")
const requests = Number(process.env.BENCH_REQUESTS ?? "20000")
const top = Number(process.env.BENCH_TOP ?? "15")
const concurrency = 32

const workloads = gatewayWorkloads()

/** Sends `count` requests, `concurrency` at a time, each read to its end; fails on any answer but 200. */
const send = async (pool: Pool, request: ReturnType<typeof forwarded>, count: number): Promise<void> => {
  let next = 0
  const worker = async () => {
    while (next < count) {
      next++
      const answer = await pool.request({
        method: "POST",
        path: request.path,
        headers: { "content-type": "application/json", ...request.headers },
        body: request.body
      })
      await answer.body.dump({ limit: Number.POSITIVE_INFINITY })
      if (answer.statusCode !== 200) throw new Error(`answered ${answer.statusCode}`)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}

const waitForFile = async (file: string): Promise<void> => {
  for (let i = 0; i < 600 && !fs.existsSync(file); i++) await new Promise((resolve) => setTimeout(resolve, 100))
  // Written in one call once it exists; a moment more for the write to end.
  await new Promise((resolve) => setTimeout(resolve, 500))
}

const main = async (): Promise<void> => {
  ensureBuilt()
  fs.rmSync(work, { recursive: true, force: true })
  fs.mkdirSync(work, { recursive: true })
  const pin = pinning()
  const ports = { simulator: await freePort(), service: await freePort() }
  const simulatorUrl = `http://127.0.0.1:${ports.simulator}`
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-allocations-"))
  const started: Array<Started> = []
  const pool = new Pool(`http://127.0.0.1:${ports.service}`, { connections: concurrency })
  try {
    started.push(startSimulator(pin, ports.simulator, path.join(work, "simulator.log")))
    const service = startService(pin, {
      port: ports.service,
      dataDir,
      simulatorUrl,
      nodeFlags: ["--import", path.join(import.meta.dirname, "allocationSampler.mjs")],
      env: { ALLOCATION_SAMPLING: "signal", ALLOCATION_PROFILE_DIR: work }
    })
    started.push(service)
    await waitForPort(ports.simulator, 120_000)
    await waitForPort(ports.service, 120_000)
    const key = await provision(`http://127.0.0.1:${ports.service}`)
    const lines = [
      `Date: ${new Date().toISOString().slice(0, 10)}. Node ${process.version}, the built service as npm start runs it, sampled by V8's ` +
        `heap profiler (every ~4 KB allocated, objects freed by either collection included). Per workload: 2,000 requests of ` +
        `warm-up, then ${requests.toLocaleString("en")} requests, ${concurrency} at a time, sampled; bytes sampled ÷ requests.`,
      "",
      "| workload | KB allocated a request | the service's functions allocating most (with what they call) |",
      "| --- | --- | --- |"
    ]
    for (const w of workloads) {
      const request = forwarded({ kind: "service", key }, w.family, w.body)
      const failure = await failureOf(`http://127.0.0.1:${ports.service}`, request)
      if (failure !== undefined) throw new Error(`${w.name}: ${failure}`)
      await send(pool, request, 2_000)
      const name = `${w.name.replace(/\W+/g, "-")}.heapprofile`
      process.kill(service.pid, "SIGUSR2")
      await new Promise((resolve) => setTimeout(resolve, 200))
      await send(pool, request, requests)
      // The profile's name: the next file the sampler writes is this workload's.
      const before = new Set(fs.readdirSync(work))
      process.kill(service.pid, "SIGUSR2")
      let written: string | undefined
      for (let i = 0; i < 600 && written === undefined; i++) {
        written = fs.readdirSync(work).find((f) => f.endsWith(".heapprofile") && !before.has(f))
        if (written === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      if (written === undefined) throw new Error("the service wrote no allocation profile")
      await waitForFile(path.join(work, written))
      fs.renameSync(path.join(work, written), path.join(work, name))
      const summary = summariseAllocations(path.join(work, name), top)
      const total = Number(/allocated \(sampled\) ([\d.]+) MB/.exec(summary)?.[1] ?? "NaN") * 2 ** 20
      const ours = summary.split("by bytes allocated in them and what they called:\n")[1]?.split("\n").slice(0, 5) ?? []
      process.stdout.write(`\n## ${w.name}: ${(total / requests / 1024).toFixed(1)} KB a request\n${summary}\n`)
      lines.push(`| ${w.name} | ${(total / requests / 1024).toFixed(1)} | ${ours.map((l) => l.trim()).join("; ")} |`)
    }
    const body = lines.join("\n")
    process.stdout.write(`\n${body}\n`)
    if (process.env.BENCH_WRITE === "1") writeSection("Gateway: allocations a request", body)
  } finally {
    await pool.close()
    for (const s of started.reverse()) await stop(s)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
