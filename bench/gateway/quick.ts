// `npm run bench:quick`: the check to run before landing a change to the request path, in under two minutes.
// The floor and the service, interleaved (the order alternating round by round), on chat JSON and chat stream
// (20 chunks) at 32 connections, as bench:gateway measures them: the service's CPU per request (with its embedded
// PostgreSQL) as a multiple of the floor's in the same round, each round's ratio and their median.
// BENCH_ROUNDS (4), BENCH_SECONDS (4), BENCH_WARMUP (1); BENCH_WRITE=1 also writes "Gateway: quick check" in
// bench/RESULTS.md (printed only otherwise). BENCH_EFFECT_FLOOR=1 adds the floor served in Effect fibers
// (effectFloorProxy.ts): what the stack alone costs over the floor (the run then takes longer than two minutes).
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt } from "../../test/support/builtService"
import { writeSection } from "../results"
import { ensureWrk, median, type Request, wrk, wrkWithCpu } from "./load"
import { freePort, pinning, type Started, stop, waitForPort } from "./processes"
import { chatBody, failureOf, forwarded, provision, startEffectFloor, startFloor, startService, startSimulator, type Via } from "./targets"

const root = path.resolve(import.meta.dirname, "../..")
const work = path.join(root, "bench/.work/gateway")
const rounds = Number(process.env.BENCH_ROUNDS ?? "4")
const seconds = Number(process.env.BENCH_SECONDS ?? "4")
const warmup = Number(process.env.BENCH_WARMUP ?? "1")
const connections = 32
/** Issue 26's target for every workload. */
const targetRatio = 2.5

type Target = "floor" | "service" | "effect floor"

interface Workload {
  readonly name: string
  readonly body: string
}

const withEffectFloor = process.env.BENCH_EFFECT_FLOOR === "1"
const measured: ReadonlyArray<Target> = withEffectFloor ? ["floor", "service", "effect floor"] : ["floor", "service"]
/** The targets compared with the floor. */
const compared: ReadonlyArray<Exclude<Target, "floor">> = withEffectFloor ? ["service", "effect floor"] : ["service"]

const workloads: ReadonlyArray<Workload> = [
  { name: "chat completion JSON", body: chatBody({ stream: false }) },
  { name: "chat completion stream (20 chunks)", body: chatBody({ stream: true }) }
]

const main = async (): Promise<void> => {
  const began = performance.now()
  ensureBuilt()
  ensureWrk()
  fs.mkdirSync(work, { recursive: true })
  const pin = pinning()
  // The orchestrator stays off the core under test.
  if (pin.driver.length > 0) execFileSync("taskset", ["-p", "-c", "1", String(process.pid)], { stdio: "ignore" })
  const ports = { simulator: await freePort(), floor: await freePort(), service: await freePort(), "effect floor": await freePort() }
  const simulatorUrl = `http://127.0.0.1:${ports.simulator}`
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-quick-"))
  const started: Array<Started> = []
  try {
    started.push(startSimulator(pin, ports.simulator, path.join(work, "quick-simulator.log")))
    const processes: Partial<Record<Target, Started>> = {
      floor: startFloor(pin, ports.floor, simulatorUrl, path.join(work, "quick-floor.log")),
      service: startService(pin, { port: ports.service, dataDir, simulatorUrl }),
      ...(withEffectFloor ? { "effect floor": startEffectFloor(pin, ports["effect floor"], simulatorUrl, path.join(work, "quick-effect-floor.log")) } : {})
    }
    started.push(...Object.values(processes))
    for (const t of ["simulator", ...measured] as const) await waitForPort(ports[t], 120_000)
    const via: Record<Target, Via> = {
      floor: { kind: "plain" },
      "effect floor": { kind: "plain" },
      service: { kind: "service", key: await provision(`http://127.0.0.1:${ports.service}`) }
    }
    const urlOf = (t: Target) => `http://127.0.0.1:${ports[t]}`
    const requestOf = (w: Workload, t: Target): Request => forwarded(via[t], "chat", w.body)
    for (const w of workloads) {
      for (const t of measured) {
        const failure = await failureOf(urlOf(t), requestOf(w, t))
        if (failure !== undefined) throw new Error(`${t} / ${w.name}: ${failure}`)
      }
    }

    const cpu = new Map<string, Array<number>>()
    const ratios = new Map<string, Array<number>>()
    for (let round = 1; round <= rounds; round++) {
      // Alternating which goes first, so that neither always follows the other's load.
      const order: ReadonlyArray<Target> = round % 2 === 1 ? measured : [...measured].reverse()
      for (const w of workloads) {
        const inRound = new Map<Target, number>()
        for (const t of order) {
          if (warmup > 0) await wrk(pin.driver, work, urlOf(t), requestOf(w, t), connections, warmup)
          const run = await wrkWithCpu(pin.driver, work, urlOf(t), requestOf(w, t), connections, seconds, processes[t]!.pid)
          inRound.set(t, run.cpuMsPerRequest)
          cpu.set(`${w.name}|${t}`, [...(cpu.get(`${w.name}|${t}`) ?? []), run.cpuMsPerRequest])
          process.stdout.write(
            `round ${round} ${w.name} ${t}: ${run.result.rps.toFixed(0)} rps, CPU ${run.cpuMsPerRequest.toFixed(3)} ms a request` +
              `${run.result.errors > 0 ? `, ${run.result.errors} errors` : ""}\n`
          )
        }
        for (const t of compared) {
          const ratio = inRound.get(t)! / inRound.get("floor")!
          ratios.set(`${w.name}|${t}`, [...(ratios.get(`${w.name}|${t}`) ?? []), ratio])
          process.stdout.write(`round ${round} ${w.name}: ${t} ${ratio.toFixed(2)}× the floor\n`)
        }
      }
    }

    const lines = [
      `Date: ${new Date().toISOString().slice(0, 10)}. Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, load average ${os.loadavg()[0]!.toFixed(2)} at the end, Node ${process.version}. ` +
        `${pin.note}; ${connections} connections; ${rounds} interleaved rounds of ${warmup} s warm-up + ${seconds} s per target and workload. ` +
        "CPU per request: user + system time of the process and its children (the service's embedded PostgreSQL). " +
        "× floor: the median of the rounds' ratios (each round's pair shared the machine's state).",
      "",
      "| workload | target | floor CPU ms a request | its CPU ms a request | × floor | ratio by round |",
      "| --- | --- | --- | --- | --- | --- |"
    ]
    for (const w of workloads) {
      for (const t of compared) {
        const byRound = ratios.get(`${w.name}|${t}`)!
        const ratio = median(byRound)
        const verdict = t === "service" ? ` (target ≤ ${targetRatio}: ${ratio <= targetRatio ? "met" : "NOT met"})` : ""
        lines.push(
          `| ${w.name} | ${t} | ${median(cpu.get(`${w.name}|floor`)!).toFixed(3)} | ${median(cpu.get(`${w.name}|${t}`)!).toFixed(3)} | ` +
            `${ratio.toFixed(2)}${verdict} | ${byRound.map((r) => r.toFixed(2)).join(", ")} |`
        )
      }
    }
    const body = lines.join("\n")
    process.stdout.write(`\n${body}\n\ntook ${((performance.now() - began) / 1000).toFixed(0)} s\n`)
    if (process.env.BENCH_WRITE === "1") writeSection("Gateway: quick check", body)
  } finally {
    for (const s of started.reverse()) await stop(s)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
