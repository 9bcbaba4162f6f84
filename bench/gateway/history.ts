// `npm run bench:gateway:history`: where the request path's cost came from. Earlier builds of the service (each a
// checkout of one commit with its dependencies and, where it has a build step, its dist/), the floor and the
// simulator, interleaved in one run, on the gateway benchmark's workloads: CPU per request at 32 connections as a
// multiple of the floor's in the same round, and the added p50 (time to first byte for streams) at one connection.
// Each build runs the way its own README said `npm start` runs it: its start script's node flags and
// dist/server/main.js, or `node --import tsx src/main.ts` before there was a build.
// BENCH_BUILDS="label=folder,label=folder,…" (in the order of history; required; label=folder+--flag+--flag runs a
// build with those node flags instead of its start script's), BENCH_ROUNDS (2), BENCH_SECONDS (4),
// BENCH_WARMUP (1), BENCH_WORKLOADS (all four; prefixes of their names). BENCH_WRITE=1 writes the section
// "Gateway: where the cost came from" in bench/RESULTS.md (printed only otherwise).
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt } from "../../test/support/builtService"
import { writeSection } from "../results"
import { ensureWrk, median, type Request, timeToFirstByte, wrk, wrkWithCpu } from "./load"
import { freePort, pinning, start, type Started, stop, waitForPort } from "./processes"
import { failureOf, forwarded, type GatewayWorkload, gatewayWorkloads, provision, serviceEnv, startFloor, startSimulator, type Via } from "./targets"

const root = path.resolve(import.meta.dirname, "../..")
const work = path.join(root, "bench/.work/gateway")
const rounds = Number(process.env.BENCH_ROUNDS ?? "2")
const seconds = Number(process.env.BENCH_SECONDS ?? "4")
const warmup = Number(process.env.BENCH_WARMUP ?? "1")

interface Build {
  readonly label: string
  readonly dir: string
  /** Node flags instead of its start script's (a build measured under other heap settings). */
  readonly flags: ReadonlyArray<string> | undefined
}

// label=folder, or label=folder+--flag+--flag for other node flags than its start script's.
const builds: ReadonlyArray<Build> = (process.env.BENCH_BUILDS ?? "").split(",").filter(Boolean).map((entry) => {
  const at = entry.indexOf("=")
  if (at <= 0) throw new Error(`BENCH_BUILDS: "${entry}" is not label=folder`)
  const label = entry.slice(0, at)
  const [dir, ...flags] = entry.slice(at + 1).split("+")
  return { label, dir: path.resolve(dir!), flags: flags.length === 0 ? undefined : flags }
})

/** How a build's own `npm start` ran it: the node flags of its start script, else its sources through tsx. */
const commandOf = ({ dir, flags }: Build): Array<string> => {
  const start = (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.start ?? ""
  // label=folder+tsx+--flag…: its sources through tsx, as before there was a build (to tell the build's cost apart).
  if (flags?.[0] === "tsx") return ["--import", "tsx", ...flags.slice(1), "src/main.ts"]
  const built = /exec node (.*?)\s*dist\/server\/main\.js/.exec(start)
  if (built !== null) return [...(flags ?? built[1]!.split(" ").filter(Boolean)), "dist/server/main.js"]
  if (start.includes("tsx src/main.ts")) return ["--import", "tsx", "src/main.ts"]
  throw new Error(`${dir}: a start script this benchmark cannot read: ${start}`)
}

type Workload = GatewayWorkload
const workloads = gatewayWorkloads()

const main = async (): Promise<void> => {
  if (builds.length === 0) throw new Error("BENCH_BUILDS names no build (label=folder,…)")
  ensureBuilt()
  ensureWrk()
  fs.mkdirSync(work, { recursive: true })
  const pin = pinning()
  if (pin.driver.length > 0) execFileSync("taskset", ["-p", "-c", "1", String(process.pid)], { stdio: "ignore" })
  const simulatorPort = await freePort()
  const floorPort = await freePort()
  const simulatorUrl = `http://127.0.0.1:${simulatorPort}`
  const started: Array<Started> = []
  const dataDirs: Array<string> = []
  try {
    started.push(startSimulator(pin, simulatorPort, path.join(work, "history-simulator.log")))
    const floor = startFloor(pin, floorPort, simulatorUrl, path.join(work, "history-floor.log"))
    started.push(floor)
    const targets: Array<{ readonly label: string; readonly port: number; readonly process: Started; via: Via }> = [
      { label: "floor", port: floorPort, process: floor, via: { kind: "plain" } }
    ]
    for (const build of builds) {
      const port = await freePort()
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `gateway-history-${build.label}-`))
      dataDirs.push(dataDir)
      const service = start(build.label, [...pin.underTest, process.execPath, ...commandOf(build)], {
        cwd: build.dir,
        log: path.join(work, `history-${build.label}.log`),
        env: serviceEnv(port, dataDir, simulatorUrl)
      })
      started.push(service)
      targets.push({ label: build.label, port, process: service, via: { kind: "plain" } })
    }
    await waitForPort(simulatorPort, 120_000)
    for (const t of targets) {
      await waitForPort(t.port, 180_000)
      if (t.label !== "floor") t.via = { kind: "service", key: await provision(`http://127.0.0.1:${t.port}`) }
    }
    const urlOf = (port: number) => `http://127.0.0.1:${port}`
    const requestOf = (w: Workload, via: Via): Request => forwarded(via, w.family, w.body)
    for (const w of workloads) {
      for (const t of targets) {
        const failure = await failureOf(urlOf(t.port), requestOf(w, t.via))
        if (failure !== undefined) throw new Error(`${t.label} / ${w.name}: ${failure}`)
      }
    }
    const key = (w: Workload, label: string) => `${w.name}|${label}`
    const ratios = new Map<string, Array<number>>()
    const cpu = new Map<string, Array<number>>()
    const latency = new Map<string, Array<number>>()
    const push = (map: Map<string, Array<number>>, k: string, value: number) => map.set(k, [...(map.get(k) ?? []), value])
    const direct: Via = { kind: "plain" }
    for (let round = 1; round <= rounds; round++) {
      for (const w of workloads) {
        // One connection: the simulator alone first, then every target; latency over the simulator's.
        const simulatorAlone = w.stream
          ? await timeToFirstByte(simulatorUrl, requestOf(w, direct), 2)
          : (await wrk(pin.driver, work, simulatorUrl, requestOf(w, direct), 1, seconds)).p50Ms
        // Later rounds go through the targets in reverse, so that none always follows the same neighbour.
        const order = round % 2 === 1 ? targets : [...targets].reverse()
        const floorCpu: { value?: number } = {}
        const inRound = new Map<string, number>()
        for (const t of order) {
          const request = requestOf(w, t.via)
          const single = w.stream ? await timeToFirstByte(urlOf(t.port), request, 2) : (await wrk(pin.driver, work, urlOf(t.port), request, 1, seconds)).p50Ms
          push(latency, key(w, t.label), single - simulatorAlone)
          if (warmup > 0) await wrk(pin.driver, work, urlOf(t.port), request, 32, warmup)
          const measured = await wrkWithCpu(pin.driver, work, urlOf(t.port), request, 32, seconds, t.process.pid)
          inRound.set(t.label, measured.cpuMsPerRequest)
          push(cpu, key(w, t.label), measured.cpuMsPerRequest)
          if (t.label === "floor") floorCpu.value = measured.cpuMsPerRequest
          process.stdout.write(
            `round ${round} ${w.name} ${t.label}: c=1 +${(single - simulatorAlone).toFixed(3)} ms, c=32 ${measured.result.rps.toFixed(0)} rps, ` +
              `CPU ${measured.cpuMsPerRequest.toFixed(3)} ms a request${measured.result.errors > 0 ? `, ${measured.result.errors} errors` : ""}\n`
          )
        }
        for (const [label, value] of inRound) push(ratios, key(w, label), value / inRound.get("floor")!)
      }
    }

    const lines = [
      `Date: ${new Date().toISOString().slice(0, 10)}. Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, Node ${process.version}, ` +
        `load average ${os.loadavg()[0]!.toFixed(2)} at the end. ${pin.note}. ${rounds} interleaved rounds of ${warmup} s warm-up + ${seconds} s ` +
        "per target and workload at 32 connections; CPU per request of the process and its children (the embedded PostgreSQL), " +
        "× floor the median of the rounds' ratios; added latency at one connection over the simulator alone in the same round " +
        "(p50 of the whole answer for JSON, of the first byte for streams), median of the rounds.",
      "",
      `| build | ${workloads.map((w) => `${w.name}: CPU × floor · added ms`).join(" | ")} |`,
      `| --- | ${workloads.map(() => "---").join(" | ")} |`
    ]
    for (const t of targets) {
      const cells = workloads.map((w) => {
        const ratio = t.label === "floor" ? 1 : median(ratios.get(key(w, t.label))!)
        return `${ratio.toFixed(2)}× (${median(cpu.get(key(w, t.label))!).toFixed(3)} ms) · ${median(latency.get(key(w, t.label))!).toFixed(2)}`
      })
      lines.push(`| ${t.label} | ${cells.join(" | ")} |`)
    }
    const body = lines.join("\n")
    process.stdout.write(`\n${body}\n`)
    if (process.env.BENCH_WRITE === "1") writeSection("Gateway: where the cost came from", body)
  } finally {
    for (const s of started.reverse()) await stop(s)
    for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true })
  }
}

await main()
