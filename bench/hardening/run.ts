// The service against a hostile upstream (peak memory, held requests) and against workspaces that send
// oversized bodies (other workspaces' latency). Not a test: figures for bench/RESULTS.md.
//   npx tsx bench/hardening/run.ts [memory|latency|large-bodies]...
// The service runs built, as `npm start` runs it (its heap flags); BENCH_SERVICE_DIR: another checkout (built there),
// for before/after figures; BENCH_SECONDS: how long each latency probe runs (8 and 10 s by default).
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { execFileSync } from "node:child_process"
import { builtEntry } from "../../test/support/builtService"
import { cpuSeconds, freePort, start, stop, waitForPort } from "../gateway/processes"

const adminToken = "bench-admin-token-0123456789"
const which = process.argv.slice(2)
const wants = (name: string) => (which.length === 0 && (name === "memory" || name === "latency")) || which.includes(name)

/** The upstream's behaviour is chosen by the last user message. */
const hostile = http.createServer((request, response) => {
  let text = ""
  request.on("data", (chunk: Buffer) => void (text += chunk.toString()))
  request.on("end", () => {
    const said: string = JSON.parse(text)?.messages?.at(-1)?.content ?? ""
    const timers: Array<NodeJS.Timeout> = []
    response.on("close", () => timers.forEach(clearInterval))
    if (said === "endless-line") {
      // An SSE line that never ends, as fast as the service reads it.
      response.writeHead(200, { "content-type": "text/event-stream" })
      const piece = Buffer.alloc(64 * 1024, "x")
      response.write("data: ")
      const pump = () => {
        while (!response.destroyed && response.write(piece)) { /* until the buffer is full */ }
      }
      response.on("drain", pump)
      pump()
      return
    }
    if (said === "huge-json") {
      // 60 MB of a JSON answer.
      response.writeHead(200, { "content-type": "application/json" })
      const piece = Buffer.alloc(1024 * 1024, " ")
      let sent = 0
      response.write('{"id":"x","object":"chat.completion","created":1,"model":"chatgen-4o","choices":[],"pad":"')
      const pump = () => {
        while (!response.destroyed && sent < 60) {
          sent += 1
          if (!response.write(piece)) return
        }
        if (sent >= 60 && !response.destroyed) response.end('","usage":{"prompt_tokens":1,"completion_tokens":1}}')
      }
      response.on("drain", pump)
      pump()
      return
    }
    if (said === "trickle") {
      // One byte every 2 s: never silent long enough for the idle timeout.
      response.writeHead(200, { "content-type": "text/event-stream" })
      timers.push(setInterval(() => response.write(":"), 2_000))
      return
    }
    response.writeHead(500).end()
  })
})

const rssMb = (pid: number): number => {
  // A process that is gone (killed by its heap limit) has no status: NaN, which Math.max leaves out.
  const status = fs.existsSync(`/proc/${pid}/status`) ? fs.readFileSync(`/proc/${pid}/status`, "utf8") : ""
  const match = /VmRSS:\s+(\d+) kB/.exec(status)
  return match === null ? Number.NaN : Number(match[1]) / 1024
}

const main = async () => {
  await new Promise<void>((resolve) => hostile.listen(0, "127.0.0.1", resolve))
  const upstream = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-hardening-"))
  // BENCH_SERVICE_DIR: another checkout of the service (e.g. the code before a change), for before/after figures.
  const serviceDir = process.env.BENCH_SERVICE_DIR ?? path.resolve(import.meta.dirname, "../..")
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: serviceDir, stdio: "inherit" })
  const service = start("service", [process.execPath, ...builtEntry("main")], {
    log: path.join(dataDir, "service.log"),
    cwd: serviceDir,
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: "error",
      UPSTREAM_PROVIDER_A_EU_URL: upstream,
      UPSTREAM_PROVIDER_A_EU_KEY: "sk-bench-upstream-secret",
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => /^(UPSTREAM_|SERVER_|AUTH_)/.test(name)))
    }
  })
  try {
    await waitForPort(port, 120_000)
    const admin = async (route: string, body: unknown) => {
      const answer = await fetch(`${base}${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      return (await answer.json()) as any
    }
    const limits = { families: { chat_completions: { requestsPerMinute: 100_000, tokensPerMinute: 100_000_000 } } }
    const keyOf = async (name: string) => {
      const workspace = await admin("/admin/workspaces", { name, settings: { rateLimits: limits } })
      return (await admin(`/admin/workspaces/${workspace.id}/api-keys`, { name, scopes: ["COMPLETION_API"] })).key as string
    }
    const hostileKey = await keyOf("hostile")
    const otherKey = await keyOf("other")
    const chat = (key: string, region: string, body: string, signal?: AbortSignal) =>
      fetch(`${base}/provider_a/${region}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
        ...(signal ? { signal } : {})
      })
    const ask = (content: string, stream: boolean) => JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content }], stream })

    /** Peak RSS while `work` runs, sampled every 50 ms. */
    const peakDuring = async (work: () => Promise<unknown>) => {
      let peak = rssMb(service.pid)
      const before = peak
      const timer = setInterval(() => {
        const now = rssMb(service.pid)
        if (!Number.isNaN(now)) peak = Math.max(peak, now)
      }, 50)
      const started = performance.now()
      const outcome = await work().then((v) => v, (e: unknown) => String(e))
      clearInterval(timer)
      return { before: Math.round(before), peak: Math.round(peak), seconds: Math.round((performance.now() - started) / 100) / 10, outcome }
    }
    const drain = async (answer: Response) => `${answer.status} ${(await answer.text()).slice(-200).replace(/\s+/g, " ")}`

    // One scenario a service process for clean peaks: memory-sse, memory-json, memory-trickle ("memory": all three in one).
    if (wants("memory") || wants("memory-sse") || wants("memory-json") || wants("memory-trickle")) {
      await chat(otherKey, "us", ask("warm up", false)).then((a) => a.text())
    }
    if (wants("memory") || wants("memory-sse")) {
      console.log("endless SSE line, 15 s at most:", await peakDuring(() =>
        chat(hostileKey, "eu", ask("endless-line", true), AbortSignal.timeout(15_000)).then(drain)))
    }
    if (wants("memory") || wants("memory-json")) {
      console.log("5 × 60 MB JSON answers at once:", await peakDuring(() =>
        Promise.all(Array.from({ length: 5 }, () => chat(hostileKey, "eu", ask("huge-json", false), AbortSignal.timeout(60_000)).then(drain)))))
    }
    if (wants("memory") || wants("memory-trickle")) {
      console.log("a byte every 2 s, 40 s at most:", await peakDuring(() =>
        chat(hostileKey, "eu", ask("trickle", true), AbortSignal.timeout(40_000)).then(drain)))
    }

    const small = ask("hello", false)
    /** p50 and p90 of sequential small requests by another workspace for this many ms. */
    const probe = async (ms: number) => {
      const times: Array<number> = []
      let failed = 0
      const end = Date.now() + ms
      while (Date.now() < end) {
        const t = performance.now()
        // A service that died answers nothing: counted, and the probe goes on (it may be restarted by nobody).
        const ok = await chat(otherKey, "us", small).then((a) => a.text().then(() => a.status === 200), () => false)
        if (ok) times.push(performance.now() - t)
        else {
          failed += 1
          await new Promise((r) => setTimeout(r, 100))
        }
      }
      times.sort((a, b) => a - b)
      const at = (q: number) => (times.length === 0 ? Number.NaN : Math.round(times[Math.floor(q * (times.length - 1))]! * 10) / 10)
      return { requests: times.length, failed, p50: at(0.5), p90: at(0.9), max: at(1) }
    }
    const seconds = Number(process.env.BENCH_SECONDS ?? "0") * 1000
    if (wants("latency")) {
      console.log("others alone:", await probe(seconds || 8_000))
      // The flood comes from another process: its uploads must not slow the probe's own event loop.
      const flooder = start("flooder", [process.execPath, "--import", "tsx", "bench/hardening/flood.ts"], {
        log: path.join(dataDir, "flooder.log"),
        env: { FLOOD_URL: `${base}/provider_a/us/v1/chat/completions`, FLOOD_KEY: hostileKey, FLOOD_CLIENTS: "4" }
      })
      await new Promise((r) => setTimeout(r, 3_000))
      const cpuBefore = cpuSeconds([service.pid])
      console.log("others while 4 clients send oversized bodies:", await probe(seconds || 10_000))
      console.log(`service CPU during those 10 s: ${(cpuSeconds([service.pid]) - cpuBefore).toFixed(1)} s`)
      await stop(flooder)
      console.log("oversized answers:", fs.readFileSync(path.join(dataDir, "flooder.log"), "utf8").trim().split("\n").at(-1))
    }

    if (wants("large-bodies")) {
      // Eight clients of four workspaces, each sending one message of 9 MB after the other, to chat completions and
      // messages in turn; meanwhile another workspace's small requests, against the same alone in the same run.
      const floodKeys = await Promise.all(["large-1", "large-2", "large-3", "large-4"].map(keyOf))
      /** The service's largest event-loop delay since the previous read (/metrics), in ms. */
      const loopLagMs = async () => {
        const text = await fetch(`${base}/metrics`).then((answer) => answer.text(), () => "")
        const quantile = (q: string) => Math.round(Number(new RegExp(`^wsapi_event_loop_lag_seconds\\{quantile="${q}"\\} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN) * 1000)
        return `p50 ${quantile("0.5")} / p99 ${quantile("0.99")} / max ${quantile("1")} ms`
      }
      await loopLagMs()
      const alone = await probe(seconds || 8_000)
      console.log("others alone:", alone, `event-loop lag ${await loopLagMs()}`)
      const flooder = start("flooder", [process.execPath, "--import", "tsx", "bench/hardening/flood.ts"], {
        log: path.join(dataDir, "large-flooder.log"),
        env: { FLOOD_URL: base, FLOOD_KEYS: floodKeys.join(","), FLOOD_CLIENTS: "8", FLOOD_SHAPE: "one-message" }
      })
      await new Promise((r) => setTimeout(r, 3_000))
      await loopLagMs()
      const cpuBefore = cpuSeconds([service.pid])
      const during = await peakDuring(() => probe(seconds || 10_000))
      console.log("others while 8 clients send 9 MB messages:", during, `event-loop lag ${await loopLagMs()}`)
      console.log(`service CPU during the probe: ${(cpuSeconds([service.pid]) - cpuBefore).toFixed(1)} s; alive: ${service.child.exitCode === null && service.child.signalCode === null}`)
      await stop(flooder)
      console.log("9 MB answers:", fs.readFileSync(path.join(dataDir, "large-flooder.log"), "utf8").trim().split("\n").at(-1))
    }
  } finally {
    await stop(service)
    hostile.closeAllConnections()
    hostile.close()
  }
}

main().then(() => process.exit(0), (error: unknown) => {
  console.error(error)
  process.exit(1)
})
