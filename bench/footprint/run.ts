// `npm run bench:footprint`: the service's memory as `npm start` runs it (built JS, plain node, its heap settings),
// beside the same build under Node's default heap sizing. Both run at once on CPU 0 against one simulator (CPU 1),
// each on its own embedded PostgreSQL, whose processes are reported apart (PSS, so shared buffers count once).
// Per variant: RSS idle after start-up, idle 5 s and 60 s after 50 requests, and the peak (VmHWM) and CPU per request under the
// gateway benchmark's four workloads at 32 connections (interleaved rounds). Writes "## Footprint" in bench/RESULTS.md.
// BENCH_SECONDS (8 per workload and round), BENCH_ROUNDS (3), BENCH_WRITE=0 (print only), BENCH_ALT_FLAGS (node flags of
// the second variant instead of none, e.g. "--max-semi-space-size=8 --max-old-space-size=192").
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { builtEntry, ensureBuilt, startFlags } from "../../test/support/builtService"
import { ensureWrk, median, type Request, wrk } from "../gateway/load"
import { cpuSeconds, freePort, peakRssMb, pinning, processTree, start, type Started, stop, waitForPort } from "../gateway/processes"
import { writeSection } from "../results"

const root = path.resolve(import.meta.dirname, "../..")
const work = path.join(root, "bench/.work/footprint")
const seconds = Number(process.env.BENCH_SECONDS ?? "8")
const rounds = Number(process.env.BENCH_ROUNDS ?? "3")
// When the service is idle again after the 50 requests, measured a second time.
const quietMs = 60_000
const adminToken = "bench-admin-token-0123456789"
const unbound = { requestsPerMinute: 100_000_000, tokensPerMinute: 1_000_000_000 }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A /proc/<pid>/status field in MB. */
const statusMb = (pid: number, field: string): number => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
  return match === null ? Number.NaN : Number(match[1]) / 1024
}

/** Proportional set size of the service's descendants (its embedded PostgreSQL), in MB. */
const postgresPssMb = (servicePid: number): number =>
  processTree(servicePid)
    .filter((pid) => pid !== servicePid)
    .reduce((sum, pid) => {
      try {
        const match = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))
        return sum + (match === null ? 0 : Number(match[1]) / 1024)
      } catch {
        return sum
      }
    }, 0)

const post = async (url: string, body: unknown, token: string, headers: Record<string, string> = {}): Promise<string> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`POST ${url}: ${response.status} ${text.slice(0, 300)}`)
  return text
}

interface Variant {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly port: number
  readonly dataDir: string
  started?: Started
  key?: string
  idleMb?: number
  idlePostgresMb?: number
  after50Mb?: number
  after50PostgresMb?: number
  /** A minute after the 50 requests: the tokenizer's tables let go (src/services/forwarding/Tokenizer.ts, tableIdleMs). */
  quietMb?: number
  readonly cpuMsPerRequest: Map<string, Array<number>>
}

const prompt = "Say something short. [simulator output_tokens=20 chunk_tokens=1]"
const workloads: ReadonlyArray<{ readonly name: string; readonly request: (key: string) => Request }> = [
  {
    name: "chat completion JSON",
    request: (key) => ({
      path: "/provider_a/eu/v1/chat/completions",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: prompt }] })
    })
  },
  {
    name: "chat completion stream",
    request: (key) => ({
      path: "/provider_a/eu/v1/chat/completions",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "chatgen-4o", stream: true, messages: [{ role: "user", content: prompt }] })
    })
  },
  {
    name: "embeddings",
    request: (key) => ({
      path: "/provider_a/eu/v1/embeddings",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "text-embedding-ada-002", input: "The quick brown fox jumps over the lazy dog." })
    })
  },
  {
    name: "messages stream",
    request: (key) => ({
      path: "/provider_b/eu/v1/messages",
      headers: { authorization: `Bearer ${key}`, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 100, stream: true, messages: [{ role: "user", content: prompt }] })
    })
  }
]

const main = async (): Promise<void> => {
  ensureBuilt()
  ensureWrk()
  fs.mkdirSync(work, { recursive: true })
  const pin = pinning()
  if (pin.driver.length > 0) execFileSync("taskset", ["-p", "-c", "1", String(process.pid)], { stdio: "ignore" })
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "footprint-bench-"))
  const simulatorPort = await freePort()
  const simulatorUrl = `http://127.0.0.1:${simulatorPort}`
  const entry = builtEntry("main")
  const withoutStartFlags = entry.filter((arg) => !startFlags.includes(arg))
  const altFlags = (process.env.BENCH_ALT_FLAGS ?? "").split(" ").filter((flag) => flag !== "")
  const variants: Array<Variant> = [
    { name: `npm start (\`${startFlags.join(" ")}\`)`, args: entry, port: await freePort(), dataDir: path.join(tmp, "start"), cpuMsPerRequest: new Map() },
    altFlags.length === 0
      ? { name: "Node's default heap sizing", args: withoutStartFlags, port: await freePort(), dataDir: path.join(tmp, "default"), cpuMsPerRequest: new Map() }
      : { name: `\`${altFlags.join(" ")}\``, args: [...altFlags, ...withoutStartFlags], port: await freePort(), dataDir: path.join(tmp, "alt"), cpuMsPerRequest: new Map() }
  ]
  let simulator: Started | undefined
  try {
    simulator = start("simulator", [...pin.driver, process.execPath, ...builtEntry("simulator")], {
      cwd: root,
      log: path.join(work, "simulator.log"),
      env: { SIMULATOR_PORT: String(simulatorPort), SIMULATOR_HOST: "127.0.0.1", SIMULATOR_TOKENIZER: "approximate", SIMULATOR_CHUNK_TOKENS: "1" }
    })
    await waitForPort(simulatorPort)
    // One at a time: start-up (initdb, migrations) would otherwise compete for the cores.
    for (const variant of variants) {
      variant.started = start(variant.name, [...pin.underTest, process.execPath, ...variant.args], {
        cwd: root,
        log: "/dev/null",
        env: {
          PORT: String(variant.port),
          HOST: "127.0.0.1",
          DATA_DIR: variant.dataDir,
          ADMIN_TOKEN: adminToken,
          LOG_LEVEL: "info",
          UPSTREAM_PROVIDER_A_EU_URL: simulatorUrl,
          UPSTREAM_PROVIDER_A_EU_KEY: "bench",
          UPSTREAM_PROVIDER_B_EU_URL: simulatorUrl,
          UPSTREAM_PROVIDER_B_EU_KEY: "bench",
          UPSTREAM_PROVIDER_C_EU_URL: simulatorUrl,
          UPSTREAM_PROVIDER_C_EU_KEY: "bench"
        }
      })
      await waitForPort(variant.port, 120_000)
      for (;;) {
        const ready = await fetch(`http://127.0.0.1:${variant.port}/readyz`).then((r) => r.status === 200, () => false)
        if (ready) break
        await sleep(200)
      }
    }
    await sleep(5000)
    for (const variant of variants) {
      const pid = variant.started!.pid
      variant.idleMb = statusMb(pid, "VmRSS")
      variant.idlePostgresMb = postgresPssMb(pid)
      const base = `http://127.0.0.1:${variant.port}`
      const workspace = JSON.parse(await post(`${base}/admin/workspaces`, {
        name: "footprint",
        settings: {
          rateLimits: {
            families: { chat_completions: unbound, embeddings: unbound, messages: unbound, fim: unbound },
            models: { "chatgen-4o": unbound, "assistantmodel-sonnet-4-5-20250929": unbound, "text-embedding-ada-002": unbound, "codemodel-2501": unbound }
          }
        }
      }, adminToken)) as { id: string }
      variant.key = (JSON.parse(await post(`${base}/admin/workspaces/${workspace.id}/api-keys`, { name: "bench", scopes: ["COMPLETION_API"] }, adminToken)) as { key: string }).key
      // 50 requests: 10 of each workload, and 10 FIM completions.
      for (let i = 0; i < 10; i++) {
        for (const workload of workloads) {
          const request = workload.request(variant.key)
          await post(base + request.path, JSON.parse(request.body), variant.key, request.headers)
        }
        await post(`${base}/provider_c/eu/v1/fim/completions`, { model: "codemodel-2501", prompt: "def add(a, b):", max_tokens: 20 }, variant.key)
      }
    }
    await sleep(5000)
    for (const variant of variants) {
      variant.after50Mb = statusMb(variant.started!.pid, "VmRSS")
      variant.after50PostgresMb = postgresPssMb(variant.started!.pid)
    }
    await sleep(quietMs - 5000)
    for (const variant of variants) variant.quietMb = statusMb(variant.started!.pid, "VmRSS")
    const errors = new Map<string, number>()
    const requests = new Map<string, number>()
    for (let round = 0; round < rounds; round++) {
      for (const workload of workloads) {
        for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
          process.stderr.write(`\rround ${round + 1}/${rounds}: ${workload.name}, ${variant.name}`.padEnd(110))
          const pid = variant.started!.pid
          const cpuBefore = cpuSeconds([pid])
          const result = await wrk(pin.driver, work, `http://127.0.0.1:${variant.port}`, workload.request(variant.key!), 32, seconds)
          const perRequest = ((cpuSeconds([pid]) - cpuBefore) * 1000) / Math.max(1, result.requests)
          // Counted and reported, not fatal: a loaded machine may time out a socket now and then.
          errors.set(variant.name, (errors.get(variant.name) ?? 0) + result.errors)
          requests.set(variant.name, (requests.get(variant.name) ?? 0) + result.requests)
          variant.cpuMsPerRequest.set(workload.name, [...(variant.cpuMsPerRequest.get(workload.name) ?? []), perRequest])
        }
      }
    }
    process.stderr.write("\n")
    const peaks = variants.map((variant) => ({ service: peakRssMb(variant.started!.pid), postgres: postgresPssMb(variant.started!.pid) }))

    const mb = (value: number | undefined) => (value === undefined ? "–" : Math.round(value).toString())
    const rows = variants.map((variant, i) =>
      `| ${variant.name} | ${mb(variant.idleMb)} | ${mb(variant.after50Mb)} | ${mb(variant.quietMb)} | **${mb(peaks[i]!.service)}** | ${mb(variant.idlePostgresMb)} / ${mb(variant.after50PostgresMb)} / ${mb(peaks[i]!.postgres)} |`
    )
    const cpuRows = workloads.map((workload) => {
      const [capped, free] = variants.map((variant) => median(variant.cpuMsPerRequest.get(workload.name) ?? []))
      return `| ${workload.name} | ${capped!.toFixed(3)} | ${free!.toFixed(3)} | ${(capped! / free!).toFixed(2)}× |`
    })
    const body = `Date: ${new Date().toISOString().slice(0, 10)}. Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}.
\`npm run bench:footprint\`: both variants run the same build (dist/server, plain \`node\`) at once, ${pin.note}; upstreams
configured (the simulator, a process of its own); embedded PostgreSQL per variant. Service RSS is VmRSS of the node process;
its PostgreSQL's processes are reported apart as the sum of their PSS. Idle: 5 s after ready; after 50 requests (10 each of
chat JSON, chat stream, embeddings, messages stream, FIM), 5 s later, and ${quietMs / 1000} s later (the tokenizer's tables are let go
10 s after their last use). Peak: VmHWM after ${rounds} interleaved rounds of the
four gateway workloads at 32 connections, ${seconds} s each.

| variant | service RSS idle (MB) | idle after 50 requests (5 s) | the same, ${quietMs / 1000} s after | peak under load | its PostgreSQL PSS: idle / after 50 / after load |
|---|---|---|---|---|---|
${rows.join("\n")}

Requests under load (errors: non-2xx answers and socket errors): ${variants.map((v) => `${v.name}: ${requests.get(v.name) ?? 0} (${errors.get(v.name) ?? 0} errors)`).join("; ")}.

CPU per request under the 32-connection load (service process only, median of the rounds):

| workload | npm start (ms) | ${variants[1]!.name} (ms) | ratio |
|---|---|---|---|
${cpuRows.join("\n")}
`
    console.log(body)
    if (process.env.BENCH_WRITE !== "0") writeSection("Footprint: measured", body)
  } finally {
    for (const variant of variants) if (variant.started !== undefined) await stop(variant.started)
    if (simulator !== undefined) await stop(simulator)
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
