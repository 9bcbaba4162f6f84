// `npm run bench:gateway`: the service against the simulator directly, a minimal Node proxy (the floor) and the
// peer gateway (@portkey-ai/gateway), interleaved, on four workloads at 1 and 32 connections. Writes bench/RESULTS.md.
// BENCH_SECONDS (4), BENCH_WARMUP (1), BENCH_ROUNDS (3), BENCH_TARGETS (direct,floor,service,peer),
// BENCH_WORKLOADS (the four; "responses JSON" and "responses stream" only when named), BENCH_PROFILE=1 (service under node --cpu-prof into bench/.work/gateway/profile;
// BENCH_PROFILE=alloc: its allocations sampled instead, as a .heapprofile there; `tsx bench/gateway/profileSummary.ts
// <file>` sums either).
// BENCH_BASELINE=<folder>: also measure an earlier build of the service (a folder holding its dist/, sql/,
// config/, package.json and node_modules) as the target "baseline", run with its own start script's node flags,
// interleaved with the current one, and
// write the comparison to the section "Gateway: before and after" instead of "Gateway" (BENCH_SECTION names another).
// The cost of metrics and traces: the targets "service-bare" (METRICS=off, no traces) and "service-traced"
// (metrics on, every span exported over OTLP to a sink in this process that answers 200), beside "service"
// (metrics on, the default; no traces), e.g. BENCH_TARGETS=direct,service-bare,service,service-traced; the
// comparison goes to the section "Gateway: observability cost".
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt, startFlagsOf } from "../../test/support/builtService"
import { writeSection } from "../results"
import { ensureWrk, median, type Request, timeToFirstByte, wrk, wrkWithCpu, type WrkResult } from "./load"
import { installPeer, peerVersion } from "./peer"
import { freePort, peakRssMb, pinning, type Started, stop, waitForPort } from "./processes"
import { chatBody, failureOf, type Family, forwarded, provision, responsesBody, startFloor, startPeer, startService, startSimulator, twentyTokens, type Via } from "./targets"

const root = path.resolve(import.meta.dirname, "../..")
const work = path.join(root, "bench/.work/gateway")
const seconds = Number(process.env.BENCH_SECONDS ?? "4")
const warmup = Number(process.env.BENCH_WARMUP ?? "1")
const rounds = Number(process.env.BENCH_ROUNDS ?? "3")
const connectionCounts = [1, 32] as const

type TargetName = "direct" | "floor" | "service" | "service-bare" | "service-traced" | "peer" | "baseline"
const baselineDir = process.env.BENCH_BASELINE === undefined ? undefined : path.resolve(process.env.BENCH_BASELINE)
const allTargets: ReadonlyArray<TargetName> = ["direct", "floor", "service", "peer"]
/** The current build with metrics off and traces off, and with metrics on and every span exported. */
const observabilityTargets: ReadonlyArray<"service-bare" | "service-traced"> = ["service-bare", "service-traced"]
const targets: ReadonlyArray<TargetName> = [
  ...[...allTargets, ...observabilityTargets].filter((t) => (process.env.BENCH_TARGETS ?? allTargets.join(",")).split(",").includes(t)),
  ...(baselineDir === undefined ? [] : ["baseline" as const])
]
/** The targets that are this service (now, its observability variants, and the earlier build when measured). */
const isService = (t: TargetName) => t === "service" || t === "baseline" || t === "service-bare" || t === "service-traced"
/** Whether this run compares the observability variants (then it writes that section). */
const measuresObservability = targets.some((t) => t === "service-bare" || t === "service-traced")

interface Workload {
  readonly name: string
  readonly stream: boolean
  readonly request: (target: TargetName) => Request | undefined
}

interface Measured {
  readonly c1: Array<WrkResult>
  readonly c32: Array<WrkResult>
  readonly ttfb: Array<number>
  readonly cpuMsPerRequest: Array<number>
  rssMb: number
}

const main = async (): Promise<void> => {
  ensureBuilt()
  fs.mkdirSync(work, { recursive: true })
  const pin = pinning()
  // The orchestrator (and the TTFB client in it) stays off the core under test.
  if (pin.driver.length > 0) execFileSync("taskset", ["-p", "-c", "1", String(process.pid)], { stdio: "ignore" })
  ensureWrk()
  const peerEntry = targets.includes("peer") ? installPeer(path.join(root, "bench/.work/portkey")) : undefined

  const ports = {
    simulator: await freePort(),
    floor: await freePort(),
    service: await freePort(),
    "service-bare": await freePort(),
    "service-traced": await freePort(),
    peer: await freePort(),
    baseline: await freePort()
  }
  const simulatorUrl = `http://127.0.0.1:${ports.simulator}`
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-bench-"))
  const baselineDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-bench-baseline-"))
  const processes: Partial<Record<TargetName, Started>> = {}
  const variantDataDirs: Array<string> = []
  // The traced variant's OTLP collector: takes every post and answers 200, as a collector that keeps up does.
  const sink = targets.includes("service-traced") ? await startOtlpSink() : undefined
  const cleanup = async () => {
    for (const started of Object.values(processes)) if (started !== undefined) await stop(started)
    await sink?.close()
    for (const dir of variantDataDirs) fs.rmSync(dir, { recursive: true, force: true })
    fs.rmSync(dataDir, { recursive: true, force: true })
    fs.rmSync(baselineDataDir, { recursive: true, force: true })
  }

  try {
    processes.direct = startSimulator(pin, ports.simulator, path.join(work, "simulator.log"))
    if (targets.includes("floor")) processes.floor = startFloor(pin, ports.floor, simulatorUrl, path.join(work, "floor.log"))
    if (targets.includes("service")) {
      const profile = process.env.BENCH_PROFILE === "1"
        ? ["--cpu-prof", "--cpu-prof-dir", path.join(work, "profile")]
        : process.env.BENCH_PROFILE === "alloc"
        ? ["--import", path.join(import.meta.dirname, "allocationSampler.mjs")]
        : []
      processes.service = startService(pin, {
        port: ports.service,
        dataDir,
        simulatorUrl,
        nodeFlags: profile,
        env: { ALLOCATION_PROFILE_DIR: path.join(work, "profile") }
      })
    }
    const variantEnv: Partial<Record<TargetName, Record<string, string>>> = {
      "service-bare": { METRICS: "off" },
      "service-traced": sink === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: "always_on" }
    }
    for (const variant of observabilityTargets.filter((t) => targets.includes(t))) {
      const data = fs.mkdtempSync(path.join(os.tmpdir(), `gateway-bench-${variant}-`))
      variantDataDirs.push(data)
      processes[variant] = startService(pin, { name: variant, port: ports[variant], dataDir: data, simulatorUrl, env: variantEnv[variant] ?? {} })
    }
    if (baselineDir !== undefined) {
      // The earlier build, run as its own `npm start` ran it (its heap flags), with its own data folder.
      processes.baseline = startService(pin, {
        name: "baseline",
        port: ports.baseline,
        dataDir: baselineDataDir,
        simulatorUrl,
        cwd: baselineDir,
        startFlags: startFlagsOf(baselineDir)
      })
    }
    if (peerEntry !== undefined) {
      processes.peer = startPeer(pin, peerEntry, ports.peer, path.join(work, "peer.log"))
    }
    for (const target of [...targets, "direct" as const]) await waitForPort(target === "direct" ? ports.simulator : ports[target], 120_000)
    // A key of each instance of the service (each has its own database).
    const keys = new Map<TargetName, string>()
    for (const t of targets) if (t !== "direct" && isService(t)) keys.set(t, await provision(`http://127.0.0.1:${ports[t]}`))
    const via = (t: TargetName): Via =>
      isService(t) ? { kind: "service", key: keys.get(t) ?? "" } : t === "peer" ? { kind: "peer", simulatorUrl } : { kind: "plain" }
    const embeddings = JSON.stringify({ model: "text-embedding-ada-002", input: "The quick brown fox jumps over the lazy dog." })
    const messages = JSON.stringify({
      model: "assistantmodel-sonnet-4-5-20250929",
      max_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: twentyTokens }]
    })
    const workload = (name: string, stream: boolean, family: Family, body: string): Workload => ({
      name,
      stream,
      request: (t) => forwarded(via(t), family, body)
    })
    const allWorkloads: ReadonlyArray<Workload> = [
      workload("chat completion JSON", false, "chat", chatBody({ stream: false })),
      workload("chat completion stream (20 chunks)", true, "chat", chatBody({ stream: true })),
      workload("embeddings", false, "embeddings", embeddings),
      workload("messages stream (20 chunks)", true, "messages", messages)
    ]
    // Measured only when BENCH_WORKLOADS names them (earlier builds and the peer may not serve them).
    const onRequest: ReadonlyArray<Workload> = [
      workload("responses JSON", false, "responses", responsesBody({ stream: false })),
      workload("responses stream (20 chunks)", true, "responses", responsesBody({ stream: true }))
    ]
    const workloads = process.env.BENCH_WORKLOADS === undefined
      ? allWorkloads
      : [...allWorkloads, ...onRequest].filter((w) => process.env.BENCH_WORKLOADS!.split(",").some((n) => w.name.startsWith(n)))

    const urlOf = (t: TargetName) => `http://127.0.0.1:${t === "direct" ? ports.simulator : ports[t]}`
    const results = new Map<string, Measured>()
    const slot = (w: Workload, t: TargetName): Measured => {
      const key = `${w.name}|${t}`
      const existing = results.get(key)
      if (existing !== undefined) return existing
      const fresh: Measured = { c1: [], c32: [], ttfb: [], cpuMsPerRequest: [], rssMb: Number.NaN }
      results.set(key, fresh)
      return fresh
    }
    // A target that cannot answer a workload is reported, not measured.
    const broken = new Map<string, string>()
    for (const w of workloads) {
      for (const t of targets) {
        const request = w.request(t)
        const failure = request === undefined ? "not routed" : await failureOf(urlOf(t), request)
        if (failure !== undefined) {
          broken.set(`${w.name}|${t}`, failure)
          process.stdout.write(`! ${t} / ${w.name}: ${failure}\n`)
        }
      }
    }

    for (let round = 1; round <= rounds; round++) {
      for (const w of workloads) {
        for (const connections of connectionCounts) {
          for (const t of targets) {
            const request = w.request(t)
            if (request === undefined || broken.has(`${w.name}|${t}`)) continue
            const target = processes[t]!
            if (warmup > 0) await wrk(pin.driver, work, urlOf(t), request, connections, warmup)
            const { result, cpuMsPerRequest, ownMsPerRequest } = await wrkWithCpu(pin.driver, work, urlOf(t), request, connections, seconds, target.pid)
            const m = slot(w, t)
            ;(connections === 1 ? m.c1 : m.c32).push(result)
            if (connections === 32) m.cpuMsPerRequest.push(cpuMsPerRequest)
            m.rssMb = peakRssMb(target.pid)
            if (connections === 1 && w.stream) m.ttfb.push(await timeToFirstByte(urlOf(t), request, Math.min(2, seconds)))
            process.stdout.write(
              `round ${round} ${w.name} c=${connections} ${t}: ${result.rps.toFixed(0)} rps p50 ${result.p50Ms.toFixed(3)} ms` +
                ` p99 ${result.p99Ms.toFixed(3)} ms cpu ${cpuMsPerRequest.toFixed(3)} ms/req` +
                ` (own process ${ownMsPerRequest.toFixed(3)})${result.errors > 0 ? ` errors ${result.errors}` : ""}\n`
            )
          }
        }
      }
    }

    const versions = {
      node: process.version,
      wrk: (() => {
        try {
          return execFileSync("dpkg-query", ["-W", "-f=${Version}", "wrk"], { encoding: "utf8" })
        } catch {
          return "?"
        }
      })(),
      peer: peerVersion
    }
    fs.writeFileSync(path.join(work, "results.json"), JSON.stringify({ results: Object.fromEntries(results), broken: Object.fromEntries(broken) }, null, 2))
    const section = process.env.BENCH_SECTION ??
      (baselineDir !== undefined ? "Gateway: before and after" : measuresObservability ? "Gateway: observability cost" : "Gateway")
    const body = report({ workloads, results, broken, versions, note: pin.note, withNotes: section === "Gateway" })
    process.stdout.write(`\n${body}\n`)
    if (sink !== undefined) process.stdout.write(`OTLP sink: ${sink.posts()} posts received from service-traced\n`)
    if (process.env.BENCH_WRITE !== "0") writeSection(section, body)
  } finally {
    await cleanup()
  }

  function report(input: {
    workloads: ReadonlyArray<Workload>
    results: Map<string, Measured>
    broken: Map<string, string>
    versions: Record<string, string>
    note: string
    /** The standing notes (notes.md) under the table: in the main section only. */
    withNotes: boolean
  }): string {
    const f = (n: number, digits = 2) => (Number.isNaN(n) ? "–" : n.toFixed(digits))
    const med = (xs: ReadonlyArray<WrkResult>, pick: (r: WrkResult) => number) => median(xs.map(pick))
    const cpu = os.cpus()[0]?.model ?? "?"
    const lines = [
      `Date: ${new Date().toISOString().slice(0, 10)}. Machine: ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Linux ${os.release()}.`,
      `Versions: Node ${input.versions.node}, wrk ${input.versions.wrk}, peer gateway @portkey-ai/gateway ${input.versions.peer} (with @hono/node-server 1.13.5, hono 4.9.7).`,
      `Setup: ${input.note}. Simulator with zero delay, 20 output tokens (20 content chunks when streamed). ` +
        `Interleaved rounds: ${rounds} × (${warmup} s warm-up + ${seconds} s) per target, workload and connection count; medians reported. ` +
        `The service runs with auth, validation, rate limiting (limits raised, not binding) and usage recording on, logging at info to /dev/null. ` +
        `CPU per request: user+system time of the process under test and its children (the service's embedded PostgreSQL) over the 32-connection run. ` +
        `Peak RSS: the process's VmHWM at the end of the run (one process per target for the whole run).`,
      "",
      "| workload | target | rps c=1 | p50 / p99 ms c=1 | added p50 ms | TTFB p50 ms | added TTFB ms | rps c=32 | p50 / p99 ms c=32 | × floor c=32 | CPU ms/req | × floor CPU | peak RSS MB |",
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    ]
    for (const w of input.workloads) {
      const direct = input.results.get(`${w.name}|direct`)
      const floor = input.results.get(`${w.name}|floor`)
      for (const t of targets) {
        const failure = input.broken.get(`${w.name}|${t}`)
        if (failure !== undefined) {
          lines.push(`| ${w.name} | ${t} | not measured: ${failure.replaceAll("|", "/").replaceAll("\n", " ")} ||||||||||| `)
          continue
        }
        const m = input.results.get(`${w.name}|${t}`)
        if (m === undefined) continue
        const p50 = med(m.c1, (r) => r.p50Ms)
        const ttfb = median(m.ttfb)
        const rps32 = med(m.c32, (r) => r.rps)
        const cpuReq = median(m.cpuMsPerRequest)
        const added = direct === undefined || t === "direct" ? Number.NaN : p50 - med(direct.c1, (r) => r.p50Ms)
        const addedTtfb = direct === undefined || t === "direct" || !w.stream ? Number.NaN : ttfb - median(direct.ttfb)
        const ratio = floor === undefined ? Number.NaN : rps32 / med(floor.c32, (r) => r.rps)
        const cpuRatio = floor === undefined || t === "direct" ? Number.NaN : cpuReq / median(floor.cpuMsPerRequest)
        const errors = [...m.c1, ...m.c32].reduce((sum, r) => sum + r.errors, 0)
        lines.push(
          `| ${w.name} | ${t}${errors > 0 ? ` (${errors} errors)` : ""} | ${f(med(m.c1, (r) => r.rps), 0)} | ${f(p50, 3)} / ${f(med(m.c1, (r) => r.p99Ms), 3)} | ${f(added, 3)} | ` +
            `${w.stream ? f(ttfb, 3) : "–"} | ${f(addedTtfb, 3)} | ${f(rps32, 0)} | ${f(med(m.c32, (r) => r.p50Ms))} / ${f(med(m.c32, (r) => r.p99Ms))} | ` +
            `${f(ratio)} | ${f(cpuReq, 3)} | ${f(cpuRatio)} | ${f(m.rssMb, 0)} |`
        )
      }
    }
    lines.push(
      "",
      ...(targets.includes("floor") && !measuresObservability ? targetLines(input.workloads, input.results) : []),
      // The earlier build has no metrics: compared like for like with them off too, when that variant runs.
      ...(baselineDir === undefined ? [] : ["", ...comparisonLines(input.workloads, input.results, "service")]),
      ...(baselineDir === undefined || !targets.includes("service-bare") ? [] : ["", ...comparisonLines(input.workloads, input.results, "service-bare")]),
      ...(measuresObservability ? ["", ...observabilityLines(input.workloads, input.results)] : [])
    )
    const notes = path.join(import.meta.dirname, "notes.md")
    if (input.withNotes && fs.existsSync(notes)) lines.push("", fs.readFileSync(notes, "utf8").trim())
    return lines.join("\n")
  }

  /**
   * Rounds are interleaved, so each round's pair shared the machine's state: the median of the per-round
   * CPU ratios is steadier than the ratio of the medians when the machine is not quiet.
   */
  function pairedRatio(now: Measured, before: Measured): number {
    return median(now.cpuMsPerRequest.map((ms, round) => ms / (before.cpuMsPerRequest[round] ?? Number.NaN)))
  }

  /** The current build against the earlier one: CPU per request and added latency, as ratios and differences. */
  function comparisonLines(workloads: ReadonlyArray<Workload>, results: Map<string, Measured>, current: TargetName): Array<string> {
    const out = [`Current build (${current}) against the earlier build (baseline, ${baselineDir}):`, ""]
    for (const w of workloads) {
      const [direct, now, before] = [results.get(`${w.name}|direct`), results.get(`${w.name}|${current}`), results.get(`${w.name}|baseline`)]
      if (direct === undefined || now === undefined || before === undefined) continue
      const added = (m: Measured) =>
        w.stream ? median(m.ttfb) - median(direct.ttfb) : median(m.c1.map((r) => r.p50Ms)) - median(direct.c1.map((r) => r.p50Ms))
      const cpu = median(now.cpuMsPerRequest) / median(before.cpuMsPerRequest)
      const paired = pairedRatio(now, before)
      const p50c32 = median(now.c32.map((r) => r.p50Ms)) / median(before.c32.map((r) => r.p50Ms))
      out.push(
        `- ${w.name}: CPU per request ${median(now.cpuMsPerRequest).toFixed(3)} vs ${median(before.cpuMsPerRequest).toFixed(3)} ms, ` +
          `${cpu.toFixed(3)}× (${((cpu - 1) * 100).toFixed(1)} %; round by round ${paired.toFixed(3)}×); added ${w.stream ? "time to first byte" : "p50"} at 1 connection ` +
          `${added(now).toFixed(3)} vs ${added(before).toFixed(3)} ms; p50 at 32 connections ${p50c32.toFixed(3)}× the baseline's`
      )
    }
    return out
  }

  /**
   * What metrics and traces cost: CPU per request and added latency of metrics on (the default) and of
   * metrics on with every span exported, each against both off (issue 18: metrics within 5 % of CPU).
   */
  function observabilityLines(workloads: ReadonlyArray<Workload>, results: Map<string, Measured>): Array<string> {
    const out = ["Observability cost (service-bare: METRICS=off, no traces; service: metrics on, no traces; service-traced: metrics on, every span exported over OTLP):", ""]
    for (const w of workloads) {
      const [direct, bare] = [results.get(`${w.name}|direct`), results.get(`${w.name}|service-bare`)]
      if (direct === undefined || bare === undefined) continue
      const added = (m: Measured) =>
        w.stream ? median(m.ttfb) - median(direct.ttfb) : median(m.c1.map((r) => r.p50Ms)) - median(direct.c1.map((r) => r.p50Ms))
      const against = (t: TargetName, label: string, target?: number) => {
        const m = results.get(`${w.name}|${t}`)
        if (m === undefined) return undefined
        const cpu = median(m.cpuMsPerRequest) / median(bare.cpuMsPerRequest)
        const verdict = target === undefined ? "" : ` (target ≤ ${((target - 1) * 100).toFixed(0)} %: ${cpu <= target ? "met" : "NOT met"})`
        return `${label} CPU per request ${median(m.cpuMsPerRequest).toFixed(3)} vs ${median(bare.cpuMsPerRequest).toFixed(3)} ms, ` +
          `${((cpu - 1) * 100).toFixed(1)} %${verdict} (round by round ${((pairedRatio(m, bare) - 1) * 100).toFixed(1)} %); ` +
          `added ${w.stream ? "TTFB" : "p50"} ${added(m).toFixed(3)} vs ${added(bare).toFixed(3)} ms`
      }
      const parts = [against("service", "metrics on:", 1.05), against("service-traced", "metrics and full traces:")].filter((part) => part !== undefined)
      out.push(`- ${w.name}: ${parts.join("; ")}`)
    }
    return out
  }

  /** The issue's targets for the service, on this machine: added latency, throughput and CPU against the floor. */
  function targetLines(workloads: ReadonlyArray<Workload>, results: Map<string, Measured>): Array<string> {
    const get = (w: Workload, t: TargetName) => results.get(`${w.name}|${t}`)
    const capacity = (m: Measured) => 1000 / median(m.cpuMsPerRequest)
    const out = ["Targets (service):", ""]
    for (const w of workloads) {
      const [direct, floor, service] = [get(w, "direct"), get(w, "floor"), get(w, "service")]
      if (direct === undefined || floor === undefined || service === undefined) continue
      const added = w.stream
        ? median(service.ttfb) - median(direct.ttfb)
        : median(service.c1.map((r) => r.p50Ms)) - median(direct.c1.map((r) => r.p50Ms))
      const ratio = median(service.c32.map((r) => r.rps)) / median(floor.c32.map((r) => r.rps))
      const cpu = median(service.cpuMsPerRequest) / median(floor.cpuMsPerRequest)
      const verdict = (ok: boolean) => (ok ? "met" : "NOT met")
      // Issue 26: at most 0.4× the peer's CPU per request, measured in the same run.
      const peer = get(w, "peer")
      const ofPeer = peer === undefined ? undefined : median(service.cpuMsPerRequest) / median(peer.cpuMsPerRequest)
      out.push(
        `- ${w.name}: added ${w.stream ? "time to first byte" : "p50"} at 1 connection ${added.toFixed(3)} ms (target < 0.5: ${verdict(added < 0.5)}); ` +
          `throughput at 32 connections ${ratio.toFixed(2)}× the floor (target ≥ 0.4: ${verdict(ratio >= 0.4)}); ` +
          `CPU per request ${cpu.toFixed(2)}× the floor (target ≤ 2.5: ${verdict(cpu <= 2.5)})` +
          `${ofPeer === undefined ? "" : ` and ${ofPeer.toFixed(2)}× the peer's (target ≤ 0.4: ${verdict(ofPeer <= 0.4)})`}. ` +
          `The simulator alone answers ${median(direct.c32.map((r) => r.rps)).toFixed(0)} rps here, so throughput near that is bound by it; ` +
          `on CPU alone (1 / CPU per request) a core would serve ${capacity(service).toFixed(0)} rps of the service against ` +
          `${capacity(floor).toFixed(0)} of the floor, ${(capacity(service) / capacity(floor)).toFixed(2)}×`
      )
    }
    return out
  }
}

/** An OTLP/HTTP collector that keeps up: reads every post and answers 200 with an empty partial success. */
async function startOtlpSink(): Promise<{ readonly url: string; readonly posts: () => number; readonly close: () => Promise<void> }> {
  let posts = 0
  const server = http.createServer((request, response) => {
    request.resume()
    request.once("end", () => {
      posts++
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts: () => posts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

await main()
