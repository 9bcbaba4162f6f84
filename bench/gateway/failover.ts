// `npm run bench:failover`: what failing over inside a route costs a request. The service runs with a routes file:
// provider_a/eu is served by a "flaky" deployment (priority 0) that answers every second request 503 at once and
// passes the others to the simulator, then by the simulator itself (priority 1); cooldownSeconds 0, so every request
// tries the flaky one first. provider_a/us is the simulator alone (the baseline, in the same run). At one connection,
// requests alternate: those the flaky deployment refused were failed over, the others were served by it.
// Printed: p50 and p99 of each kind of request, and the added latency of a failed-over one over the baseline.
// BENCH_REQUESTS (2000 a kind), BENCH_ROUNDS (3); BENCH_WRITE=1 writes "Gateway: failover" in bench/RESULTS.md.
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { Agent, request } from "undici"
import { ensureBuilt } from "../../test/support/builtService"
import { writeSection } from "../results"
import { median } from "./load"
import { freePort, pinning, start, stop, waitForPort } from "./processes"
import { adminToken, chatBody, provision, startSimulator } from "./targets"

const root = path.resolve(import.meta.dirname, "../..")
const work = path.join(root, "bench/.work/failover")
const requests = Number(process.env.BENCH_REQUESTS ?? "2000")
const rounds = Number(process.env.BENCH_ROUNDS ?? "3")

/** Every second request answered 503 at once; the others passed to the simulator as they are. */
const startFlaky = (port: number, simulatorUrl: string): Promise<http.Server> => {
  const upstream = new Agent({ connections: 8 })
  let count = 0
  const server = http.createServer((incoming, outgoing) => {
    count += 1
    const chunks: Array<Buffer> = []
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
    incoming.on("end", () => {
      if (count % 2 === 1) {
        outgoing.writeHead(503, { "content-type": "application/json" }).end('{"error":{"message":"overloaded","type":"server_error"}}')
        return
      }
      request(`${simulatorUrl}${incoming.url}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: String(incoming.headers.authorization ?? "") },
        body: Buffer.concat(chunks),
        dispatcher: upstream
      }).then(async (answer) => {
        outgoing.writeHead(answer.statusCode, { "content-type": String(answer.headers["content-type"] ?? "application/json") })
        outgoing.end(Buffer.from(await answer.body.arrayBuffer()))
      }, () => outgoing.writeHead(502).end())
    })
  })
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)))
}

const routesFile = (flakyUrl: string, simulatorUrl: string) => `
cooldownSeconds: 0
routes:
  provider_a/eu:
    - { name: flaky, kind: native, url: "${flakyUrl}", auth: { apiKey: { env: BENCH_KEY } } }
    - { name: simulator-eu, kind: native, url: "${simulatorUrl}", auth: { apiKey: { env: BENCH_KEY } }, priority: 1 }
  provider_a/us:
    - { name: simulator-us, kind: native, url: "${simulatorUrl}", auth: { apiKey: { env: BENCH_KEY } } }
`

const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const main = async (): Promise<void> => {
  ensureBuilt()
  fs.rmSync(work, { recursive: true, force: true })
  fs.mkdirSync(work, { recursive: true })
  const pin = pinning()
  const [simulatorPort, flakyPort, servicePort] = [await freePort(), await freePort(), await freePort()]
  const simulatorUrl = `http://127.0.0.1:${simulatorPort}`
  const simulator = startSimulator(pin, simulatorPort, path.join(work, "simulator.log"))
  await waitForPort(simulatorPort)
  const flaky = await startFlaky(flakyPort, simulatorUrl)
  const file = path.join(work, "upstreams.yaml")
  fs.writeFileSync(file, routesFile(`http://127.0.0.1:${flakyPort}`, simulatorUrl))
  const service = start("service", [...pin.underTest, process.execPath, "--max-semi-space-size=4", "--max-old-space-size=192", "--heap-growing-percent=100", "dist/server/main.js"], {
    cwd: root,
    log: path.join(work, "service.log"),
    env: { PORT: String(servicePort), HOST: "127.0.0.1", DATA_DIR: path.join(work, "data"), ADMIN_TOKEN: adminToken, UPSTREAMS_FILE: file, BENCH_KEY: "bench", LOG_LEVEL: "error" }
  })
  try {
    await waitForPort(servicePort, 120_000)
    const serviceUrl = `http://127.0.0.1:${servicePort}`
    const key = await provision(serviceUrl)
    const client = new Agent({ connections: 1 })
    const body = chatBody({ stream: false })
    const once = async (region: string): Promise<number> => {
      const began = performance.now()
      const answer = await request(`${serviceUrl}/provider_a/${region}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
        dispatcher: client
      })
      await answer.body.arrayBuffer()
      if (answer.statusCode !== 200) throw new Error(`${region}: status ${answer.statusCode}`)
      return performance.now() - began
    }
    for (let i = 0; i < 400; i++) await once(i % 2 === 0 ? "eu" : "us")
    const results: Array<{ baseline: number[]; servedByFlaky: number[]; failedOver: number[] }> = []
    for (let round = 0; round < rounds; round++) {
      const baseline: Array<number> = []
      const servedByFlaky: Array<number> = []
      const failedOver: Array<number> = []
      // eu and us interleaved: each eu request is, in turn, refused by the flaky deployment (failed over) or served by it.
      for (let i = 0; i < requests * 2; i++) {
        if (i % 2 === 1) baseline.push(await once("us"))
        else (i % 4 === 0 ? failedOver : servedByFlaky).push(await once("eu"))
      }
      results.push({ baseline, servedByFlaky, failedOver })
      console.log(`round ${round + 1}: p50 baseline ${median(baseline).toFixed(3)} ms, served by the flaky deployment ${median(servedByFlaky).toFixed(3)} ms, failed over ${median(failedOver).toFixed(3)} ms`)
    }
    const line = (name: string, pick: (r: (typeof results)[number]) => ReadonlyArray<number>) => {
      const all = results.flatMap((r) => pick(r))
      return `| ${name} | ${median(results.map((r) => median(pick(r)))).toFixed(3)} | ${percentile(all, 99).toFixed(3)} |`
    }
    const added = median(results.map((r) => median(r.failedOver) - median(r.baseline)))
    const text = [
      `${os.cpus().length} cores, ${pin.note}; ${rounds} rounds of ${requests} requests a kind at one connection, chat JSON, load average ${os.loadavg()[0]!.toFixed(2)} at the end.`,
      "",
      "| request | p50 ms | p99 ms |",
      "|---|---|---|",
      line("baseline: a route of one deployment (the simulator)", (r) => r.baseline),
      line("served by the flaky deployment (through its proxy hop)", (r) => r.servedByFlaky),
      line("failed over: the flaky deployment's 503, then the simulator", (r) => r.failedOver),
      "",
      `Added latency of a failed-over request over the baseline (median of the rounds' p50 differences): ${added.toFixed(3)} ms.`
    ].join("\n")
    console.log(text)
    if (process.env.BENCH_WRITE === "1") writeSection("Gateway: failover", text)
  } finally {
    await stop(service)
    await stop(simulator)
    flaky.close()
  }
}

main().then(() => process.exit(0), (error: unknown) => {
  console.error(error)
  process.exit(1)
})
