// `npm run bench:streams`: many streams at once. 256 and 1,024 concurrent chat streams of 20 chunks, 50 ms apart (the
// simulator's chunk_delay_ms, asked in the prompt), each client running one stream after another for BENCH_SECONDS,
// against the simulator directly (the baseline: what the client and the simulator add by themselves, measured in the
// same run), the floor, the service and the peer gateway (when an earlier bench:gateway installed it, or when
// BENCH_TARGETS names it). Per target: the gaps between a stream's events as the client sees them, p50 and p99, and the
// same less the direct baseline's (the delay the gateway adds between chunks); the time to the first event; the streams
// that stall (a gap or a first event longer than BENCH_STALL_MS, or a stream that fails or never ends); the target's CPU
// per stream and peak RSS; the client's own CPU and event-loop delay (if the client were the bottleneck, they would say).
// BENCH_STREAMS (256,1024), BENCH_SECONDS (10), BENCH_ROUNDS (1), BENCH_WARMUP (2 s, before the first round),
// BENCH_CHUNK_DELAY_MS (50), BENCH_STALL_MS (1000), BENCH_TARGETS (direct,floor,service, and peer when installed);
// BENCH_WRITE=1 also writes "Gateway: concurrent streams" in bench/RESULTS.md (printed only otherwise).
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt } from "../../test/support/builtService"
import { writeSection } from "../results"
import { median } from "./load"
import { installedPeer, installPeer, peerVersion } from "./peer"
import { cpuSeconds, ensureOpenFiles, freePort, peakRssMb, pinning, processTree, type Started, stop, waitForPort } from "./processes"
import { runStreams } from "./streamLoad"
import { type StreamTiming, summarise } from "./streamTimings"
import { chatBody, failureOf, forwarded, pacedTwentyTokens, provision, startFloor, startPeer, startService, startSimulator, type Via } from "./targets"

const root = path.resolve(import.meta.dirname, "../..")
const work = path.join(root, "bench/.work/gateway")
const streamCounts = (process.env.BENCH_STREAMS ?? "256,1024").split(",").map(Number)
const seconds = Number(process.env.BENCH_SECONDS ?? "10")
const rounds = Number(process.env.BENCH_ROUNDS ?? "1")
const warmup = Number(process.env.BENCH_WARMUP ?? "2")
const chunkDelayMs = Number(process.env.BENCH_CHUNK_DELAY_MS ?? "50")
const stallMs = Number(process.env.BENCH_STALL_MS ?? "1000")
/** Issue 26's targets: p99 added delay between chunks under 10 ms at 256 streams, no stall at 1,024. */
const addedP99TargetMs = 10
/** Connections from one loopback address at most: under the service's default SERVER_MAX_CONNECTIONS_PER_ADDRESS (256). */
const perAddress = 128
/** The clients start over this long (see streamLoad.ts). */
const rampMs = 1000
/** Streams still running this long after the load ends are cut and counted as never finished. */
const drainMs = 30_000

type Target = "direct" | "floor" | "service" | "peer"

const peerDir = path.join(root, "bench/.work/portkey")
const targets: ReadonlyArray<Target> = (() => {
  const named = process.env.BENCH_TARGETS?.split(",")
  const defaults: ReadonlyArray<Target> = ["direct", "floor", "service", ...(installedPeer(peerDir) === undefined ? [] : ["peer" as const])]
  return named === undefined ? defaults : (["direct", "floor", "service", "peer"] as const).filter((t) => named.includes(t))
})()

interface Measured {
  readonly timings: Array<StreamTiming>
  readonly cpuMsPerStream: Array<number>
  /** The client's and the simulator's CPU together, in % of one core: they share the driver's core. */
  readonly driverCpuPercent: Array<number>
  readonly clientCpuPercent: Array<number>
  readonly clientLoopDelayP99Ms: Array<number>
  rssMb: number
}

const main = async (): Promise<void> => {
  if (!targets.includes("direct")) throw new Error("BENCH_TARGETS must include direct: it is the baseline every gap is compared with")
  const most = Math.max(...streamCounts)
  // A gateway holds a socket to the client and one upstream per stream; the client and the simulator fewer.
  const needed = 2 * most + 256
  const openFiles = ensureOpenFiles(needed)
  if (openFiles < needed) {
    throw new Error(
      `${most} streams need ${needed} open files a process; the limit here is ${openFiles} and this script could not raise it ` +
        `(that takes root with CAP_SYS_RESOURCE): raise it first (ulimit -n ${needed}, LimitNOFILE under systemd) or lower BENCH_STREAMS`
    )
  }
  ensureBuilt()
  fs.mkdirSync(work, { recursive: true })
  const pin = pinning()
  // The client stays off the core under test (it shares the simulator's).
  if (pin.driver.length > 0) execFileSync("taskset", ["-p", "-c", "1", String(process.pid)], { stdio: "ignore" })
  const peerEntry = targets.includes("peer") ? installPeer(peerDir) : undefined

  const ports = { direct: await freePort(), floor: await freePort(), service: await freePort(), peer: await freePort() }
  const simulatorUrl = `http://127.0.0.1:${ports.direct}`
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-streams-"))
  const processes: Partial<Record<Target, Started>> = {}
  try {
    processes.direct = startSimulator(pin, ports.direct, path.join(work, "streams-simulator.log"))
    // The floor's upstream pool as large as the most streams: it is the least a gateway must do, not a queue.
    if (targets.includes("floor")) processes.floor = startFloor(pin, ports.floor, simulatorUrl, path.join(work, "streams-floor.log"), most)
    if (targets.includes("service")) processes.service = startService(pin, { port: ports.service, dataDir, simulatorUrl })
    if (peerEntry !== undefined) processes.peer = startPeer(pin, peerEntry, ports.peer, path.join(work, "streams-peer.log"))
    for (const t of targets) await waitForPort(ports[t], 120_000)
    const key = targets.includes("service") ? await provision(`http://127.0.0.1:${ports.service}`) : ""
    const via: Record<Target, Via> = {
      direct: { kind: "plain" },
      floor: { kind: "plain" },
      service: { kind: "service", key },
      peer: { kind: "peer", simulatorUrl }
    }
    // The usage chunk asked for: the service always asks its upstream for it and drops it for a client that did not,
    // which would read as one gap of two chunk delays that no other target has.
    const body = chatBody({ stream: true, prompt: pacedTwentyTokens(chunkDelayMs), fields: { stream_options: { include_usage: true } } })
    const urlOf = (t: Target) => `http://127.0.0.1:${ports[t]}`
    const requestOf = (t: Target) => forwarded(via[t], "chat", body)
    for (const t of targets) {
      const failure = await failureOf(urlOf(t), requestOf(t))
      if (failure !== undefined) throw new Error(`${t}: ${failure}`)
    }
    const load = (t: Target, streams: number, forSeconds: number) =>
      runStreams({ baseUrl: urlOf(t), request: requestOf(t), streams, seconds: forSeconds, rampMs, drainMs, perAddress })

    if (warmup > 0) for (const t of targets) await load(t, Math.min(...streamCounts), warmup)
    const results = new Map<string, Measured>()
    for (let round = 1; round <= rounds; round++) {
      for (const streams of streamCounts) {
        for (const t of targets) {
          const pid = processes[t]!.pid
          const tree = processTree(pid)
          const cpuBefore = cpuSeconds(tree)
          const simulatorBefore = cpuSeconds([processes.direct.pid])
          const run = await load(t, streams, seconds)
          const cpuMsPerStream = ((cpuSeconds(tree) - cpuBefore) * 1000) / run.timings.length
          const driverCpuPercent = run.clientCpuPercent + ((cpuSeconds([processes.direct.pid]) - simulatorBefore) * 1000 * 100) / run.wallMs
          const key = `${streams}|${t}`
          const m = results.get(key) ??
            { timings: [], cpuMsPerStream: [], driverCpuPercent: [], clientCpuPercent: [], clientLoopDelayP99Ms: [], rssMb: Number.NaN }
          results.set(key, m)
          m.timings.push(...run.timings)
          m.cpuMsPerStream.push(cpuMsPerStream)
          m.driverCpuPercent.push(driverCpuPercent)
          m.clientCpuPercent.push(run.clientCpuPercent)
          m.clientLoopDelayP99Ms.push(run.clientLoopDelayP99Ms)
          m.rssMb = peakRssMb(pid)
          const s = summarise(run.timings, stallMs)
          process.stdout.write(
            `round ${round} ${streams} streams ${t}: ${s.streams} streams, ${s.stalled} stalled; first event p50 ${s.firstEvent.p50.toFixed(1)} ` +
              `p99 ${s.firstEvent.p99.toFixed(1)} ms; gap p50 ${s.gaps.p50.toFixed(1)} p99 ${s.gaps.p99.toFixed(1)} max ${s.gaps.max.toFixed(1)} ms; ` +
              `CPU ${cpuMsPerStream.toFixed(2)} ms a stream; driver core ${driverCpuPercent.toFixed(0)} % (client ${run.clientCpuPercent.toFixed(0)} %), client loop delay p99 ${run.clientLoopDelayP99Ms.toFixed(1)} ms\n`
          )
        }
      }
    }
    const table = report(results, pin.note)
    process.stdout.write(`\n${table}\n`)
    if (process.env.BENCH_WRITE === "1") writeSection("Gateway: concurrent streams", table)
  } finally {
    for (const started of Object.values(processes).reverse()) if (started !== undefined) await stop(started)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

const report = (results: Map<string, Measured>, note: string): string => {
  const f = (n: number, digits = 1) => (Number.isNaN(n) ? "–" : n.toFixed(digits))
  const lines = [
    `Date: ${new Date().toISOString().slice(0, 10)}. Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, load average ${os.loadavg()[0]!.toFixed(2)} at the end, Node ${process.version}` +
      `${targets.includes("peer") ? `, peer gateway @portkey-ai/gateway ${peerVersion}` : ""}. ${note}; the client (Node's http client, in the orchestrator) on CPU 1 too. ` +
      `Chat streams of 20 chunks ${chunkDelayMs} ms apart (the simulator's chunk_delay_ms); each of N clients runs one stream after another for ${seconds} s ` +
      `(${rounds} round${rounds === 1 ? "" : "s"}, targets interleaved), started over ${rampMs} ms, from loopback addresses 127.0.0.2… (${perAddress} connections each). ` +
      `Gaps: between consecutive events of a stream, as the client read them; added: less the direct baseline's at the same count. ` +
      `Stalled: a gap or a first event over ${stallMs} ms, or a stream that failed or did not end within ${drainMs / 1000} s of the load's end. ` +
      "CPU: the target's process and children per stream. Driver: the client's and the simulator's CPU together in % of their one core " +
      `(near 100, they are the limit: the baseline's own gaps and stalls show it), the client's share, and its event-loop delay p99 (what it may have added to a gap).`,
    "",
    "| streams | target | streams run | stalled (gap · first event · failed) | first event p50 / p99 ms | gap p50 / p99 / max ms | added gap p50 / p99 ms | CPU ms a stream | peak RSS MB | driver CPU % (client) · client loop p99 ms |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  ]
  const verdicts: Array<string> = []
  const failureLines: Array<string> = []
  for (const streams of streamCounts) {
    const direct = results.get(`${streams}|direct`)
    const base = direct === undefined ? undefined : summarise(direct.timings, stallMs)
    const busiest = Math.max(...targets.flatMap((t) => results.get(`${streams}|${t}`)?.driverCpuPercent ?? []))
    if (busiest >= 90 || (base !== undefined && base.stalled > 0)) {
      verdicts.push(
        `- ${streams} streams: the driver's core (client and simulator) was ${busiest.toFixed(0)} % busy and the direct baseline stalled ` +
          `${base?.stalled ?? "?"} streams: at this count the figures measure the driver as well as the gateways`
      )
    }
    for (const t of targets) {
      const m = results.get(`${streams}|${t}`)
      if (m === undefined) continue
      const s = summarise(m.timings, stallMs)
      const failed = s.streams - s.completed
      const addedP50 = t === "direct" || base === undefined ? Number.NaN : s.gaps.p50 - base.gaps.p50
      const addedP99 = t === "direct" || base === undefined ? Number.NaN : s.gaps.p99 - base.gaps.p99
      lines.push(
        `| ${streams} | ${t} | ${s.streams} | ${s.stalled} (${s.longGap} · ${s.lateFirstEvent} · ${failed}) | ${f(s.firstEvent.p50)} / ${f(s.firstEvent.p99)} | ` +
          `${f(s.gaps.p50)} / ${f(s.gaps.p99)} / ${f(s.gaps.max)} | ${f(addedP50)} / ${f(addedP99)} | ${t === "direct" ? "–" : f(median(m.cpuMsPerStream), 2)} | ` +
          `${t === "direct" ? "–" : f(m.rssMb, 0)} | ${f(Math.max(...m.driverCpuPercent), 0)} (${f(Math.max(...m.clientCpuPercent), 0)}) · ${f(Math.max(...m.clientLoopDelayP99Ms))} |`
      )
      if (failed > 0) failureLines.push(`- ${streams} streams, ${t}: ${[...s.failures].map(([reason, n]) => `${n} × ${reason}`).join(", ")}`)
      if (t === "service" || t === "peer") {
        if (streams === 256) verdicts.push(`- ${t}, 256 streams: p99 added delay between chunks ${f(addedP99)} ms (target < ${addedP99TargetMs}: ${addedP99 < addedP99TargetMs ? "met" : "NOT met"})`)
        if (streams === 1024) verdicts.push(`- ${t}, 1,024 streams: ${s.stalled} of ${s.streams} streams stalled (target none: ${s.stalled === 0 ? "met" : "NOT met"})`)
      }
    }
  }
  return [...lines, ...(failureLines.length > 0 ? ["", "Failed streams, by reason:", "", ...failureLines] : []), ...(verdicts.length > 0 ? ["", "Targets (issue 26) and the baseline's health:", "", ...verdicts] : [])].join("\n")
}

await main()
