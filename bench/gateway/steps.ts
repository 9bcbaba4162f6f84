// `npm run bench:gateway:steps`: what each step of a forwarded request costs the service in CPU. Requests that
// stop at successive steps (refused without a key, for an unknown model, by the rate limits; answered) are sent to the
// service under load, and the CPU time of its process per request is compared with the floor's. Writes the
// "Gateway: cost per step" section of bench/RESULTS.md. BENCH_SECONDS (3), BENCH_ROUNDS (3), BENCH_CONNECTIONS (8).
// BENCH_PROFILE=<text>: only the steps whose name holds the text, the service under `node --cpu-prof`, and a
// summary of where its CPU time went instead of the table. BENCH_SERVICE_FLAGS: extra node flags for the service
// (e.g. "--max-semi-space-size=32"), for trying runtime settings. BENCH_ONLY=<text>: only the floors and the
// steps whose name holds the text (no table is written).
import { buildSync } from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { builtEntry, ensureBuilt } from "../../test/support/builtService"
import { writeSection } from "../results"
import { ensureWrk, median, type Request, wrk } from "./load"
import { summarise } from "./profileSummary"
import { cpuSeconds, freePort, pinning, start, type Started, stop, waitForPort } from "./processes"
import { adminToken, pacedTwentyTokens, serviceEnv, startFloor, startSimulator, twentyTokens } from "./targets"

const root = path.resolve(import.meta.dirname, "../..")
const work = path.join(root, "bench/.work/gateway")
const seconds = Number(process.env.BENCH_SECONDS ?? "3")
const rounds = Number(process.env.BENCH_ROUNDS ?? "3")
const connections = Number(process.env.BENCH_CONNECTIONS ?? "8")
const profiled = process.env.BENCH_PROFILE

interface Step {
  readonly name: string
  /** What this step adds to the one before it. */
  readonly adds: string
  readonly target: "floor" | "service"
  readonly request: (keys: Keys) => Request
  /** The row this one adds to (default: the service row above). */
  readonly base?: string
  /** The floor row it is compared with (default: the first). */
  readonly floor?: string
}

const chat = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: twentyTokens }], ...fields })
const chatPath = "/provider_a/eu/v1/chat/completions"
/** As LLM streams arrive: one event at a time, a millisecond apart, each its own read and write. */
const pacedPrompt = pacedTwentyTokens(1)
const pacedStream = () => JSON.stringify({ model: "chatgen-4o", stream: true, messages: [{ role: "user", content: pacedPrompt }] })

/** A key of a workspace with limits that never bind, and one of a workspace out of requests for the minute. */
interface Keys {
  readonly open: string
  readonly limited: string
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

const steps: ReadonlyArray<Step> = [
  { name: "floor: chat completion JSON", adds: "node:http in, undici out, bodies piped", target: "floor", request: () => ({ path: "/v1/chat/completions", headers: {}, body: chat() }) },
  {
    name: "service: refused, no key (401)",
    adds: "route match, request id, one Effect fiber, error body, log line",
    target: "service",
    request: () => ({ path: chatPath, headers: {}, body: chat() })
  },
  {
    name: "service: refused, unknown model (404)",
    adds: "key lookup (cached), body read, JSON parse, payload schema decode, model check",
    target: "service",
    request: (keys) => ({ path: chatPath, headers: bearer(keys.open), body: chat({ model: "chatgen-unknown" }) })
  },
  {
    name: "service: refused, rate limited (429)",
    adds: "prompt tokens counted, rate-limit decision, refusal with limit headers",
    target: "service",
    request: (keys) => ({ path: chatPath, headers: bearer(keys.limited), body: chat() })
  },
  {
    name: "service: chat completion JSON (200)",
    adds: "upstream exchange, answer read and relayed, usage recorded, reservation settled",
    target: "service",
    request: (keys) => ({ path: chatPath, headers: bearer(keys.open), body: chat() })
  },
  {
    name: "service: chat completion stream, 20 chunks (200)",
    adds: "the JSON answer's work, streamed: each event decoded, checked and relayed",
    target: "service",
    base: "service: chat completion JSON (200)",
    request: (keys) => ({ path: chatPath, headers: bearer(keys.open), body: chat({ stream: true }) })
  },
  {
    name: "floor: chat completion stream, 20 paced chunks",
    adds: "the same stream, each event read and written on its own",
    target: "floor",
    request: () => ({ path: "/v1/chat/completions", headers: {}, body: pacedStream() })
  },
  {
    name: "service: chat completion stream, 20 paced chunks (200)",
    adds: "over the paced floor: the whole service, with each event decoded, checked and relayed on its own",
    target: "service",
    base: "floor: chat completion stream, 20 paced chunks",
    floor: "floor: chat completion stream, 20 paced chunks",
    request: (keys) => ({ path: chatPath, headers: bearer(keys.open), body: pacedStream() })
  }
]

/**
 * The service as one plain ESM file (packages left in node_modules): under tsx the profile shows
 * whitespace-minified code without function names; the bundle keeps names and lines.
 */
const bundled = (): string => {
  // Two folders below the root, as the sources are: paths relative to them (sql/) still resolve.
  const outfile = path.join(root, "bench/.work/service.mjs")
  buildSync({ entryPoints: [path.join(root, "src/main.ts")], bundle: true, platform: "node", format: "esm", packages: "external", outfile })
  return outfile
}

const main = async (): Promise<void> => {
  ensureBuilt()
  ensureWrk()
  const only = profiled ?? process.env.BENCH_ONLY
  const chosen = only === undefined ? steps : steps.filter((step) => step.target === "floor" || step.name.includes(only))
  const profileDir = path.join(work, "profile")
  fs.rmSync(profileDir, { recursive: true, force: true })
  fs.mkdirSync(work, { recursive: true })
  const pin = pinning()
  const ports = { simulator: await freePort(), floor: await freePort(), service: await freePort() }
  const simulatorUrl = `http://127.0.0.1:${ports.simulator}`
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-steps-"))
  const node = process.execPath
  const started: Array<Started> = []
  try {
    started.push(startSimulator(pin, ports.simulator, path.join(work, "steps-simulator.log")))
    const floor = startFloor(pin, ports.floor, simulatorUrl, path.join(work, "steps-floor.log"))
    const service = start("service", [...pin.underTest, node, ...(process.env.BENCH_SERVICE_FLAGS ?? "").split(" ").filter(Boolean), ...(profiled === undefined ? builtEntry("main") : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, bundled()])], {
      cwd: root,
      log: "/dev/null",
      env: {
        ...serviceEnv(ports.service, dataDir, simulatorUrl),
        LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
        // Named, as the bundle does not sit where src/config.ts looks for its default.
        PRICE_TABLE_FILE: path.join(root, "config/prices.json")
      }
    })
    started.push(floor, service)
    for (const port of Object.values(ports)) await waitForPort(port, 120_000)

    const admin = async (route: string, body: unknown) => {
      const response = await fetch(`http://127.0.0.1:${ports.service}${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`)
      return (await response.json()) as Record<string, unknown>
    }
    const unbound = { requestsPerMinute: 100_000_000, tokensPerMinute: 1_000_000_000 }
    const workspace = await admin("/admin/workspaces", {
      name: "gateway-steps",
      settings: { rateLimits: { families: { chat_completions: unbound }, models: { "chatgen-4o": unbound } } }
    })
    const limitedWorkspace = await admin("/admin/workspaces", {
      name: "gateway-steps-limited",
      settings: { rateLimits: { families: { chat_completions: { requestsPerMinute: 1, tokensPerMinute: 1_000_000 } } } }
    })
    const keyOf = async (id: unknown) =>
      String((await admin(`/admin/workspaces/${String(id)}/api-keys`, { name: "steps", scopes: ["COMPLETION_API"] })).key)
    const keys: Keys = { open: await keyOf(workspace.id), limited: await keyOf(limitedWorkspace.id) }

    const cpuPerRequest = new Map<string, Array<number>>()
    for (let round = 1; round <= rounds; round++) {
      for (const step of chosen) {
        const underTest = step.target === "floor" ? floor : service
        const url = `http://127.0.0.1:${step.target === "floor" ? ports.floor : ports.service}`
        await wrk(pin.driver, work, url, step.request(keys), connections, 1)
        const before = cpuSeconds([underTest.pid])
        const result = await wrk(pin.driver, work, url, step.request(keys), connections, seconds)
        const ms = ((cpuSeconds([underTest.pid]) - before) * 1000) / result.requests
        cpuPerRequest.set(step.name, [...(cpuPerRequest.get(step.name) ?? []), ms])
        process.stdout.write(`round ${round} ${step.name}: ${result.rps.toFixed(0)} rps, ${ms.toFixed(3)} ms CPU a request\n`)
      }
    }

    if (profiled !== undefined) {
      await stop(service)
      for (const file of fs.readdirSync(profileDir)) process.stdout.write(`\n${summarise(path.join(profileDir, file))}\n`)
      return
    }
    const lines = [
      `Date: ${new Date().toISOString().slice(0, 10)}. Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, Node ${process.version}. ` +
        `${pin.note}; ${connections} connections; ${rounds} interleaved rounds of ${seconds} s each, medians. CPU time of the ` +
        "process under test only (not the embedded PostgreSQL), per request. Each service row adds the named work to the row above it (the stream row: to the JSON answer; the paced stream: to the paced floor, which is also its × floor).",
      "",
      "| request | CPU ms a request | × floor | added by this step (ms) | what the step adds |",
      "| --- | --- | --- | --- | --- |"
    ]
    let previous: number | undefined
    for (const step of chosen) {
      const ms = median(cpuPerRequest.get(step.name)!)
      const base = step.base === undefined ? previous : median(cpuPerRequest.get(step.base)!)
      const added = step.target === "floor" && step.base === undefined ? "–" : base === undefined ? ms.toFixed(3) : (ms - base).toFixed(3)
      const floorMs = median(cpuPerRequest.get(step.floor ?? steps[0]!.name)!)
      lines.push(`| ${step.name} | ${ms.toFixed(3)} | ${(ms / floorMs).toFixed(2)} | ${added} | ${step.adds} |`)
      if (step.target === "service") previous = ms
    }
    const body = lines.join("\n")
    process.stdout.write(`\n${body}\n`)
    if (process.env.BENCH_WRITE !== "0" && only === undefined) writeSection("Gateway: cost per step", body)
  } finally {
    for (const s of started.reverse()) await stop(s)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

void main()
