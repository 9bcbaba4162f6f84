/**
 * Export benchmark (`npm run bench:export`). In one run, on a fresh embedded PostgreSQL:
 *
 * 1. builds the service as `npm start` does (dist/server) and starts it as its own process, twice: with the
 *    heap settings `npm start` applies, and with Node's default heap sizing;
 * 2. ingests demo activity (about 2M events, ~1M user-days) through `POST /admin/workspaces/{id}/events`
 *    in 10,000-event batches: ingestion throughput in events/s;
 * 3. in interleaved rounds, runs (a) the users export end to end over HTTP (request → file stored
 *    under DATA_DIR) on each service process, with its peak RSS (VmHWM, reset before each export),
 *    and (b) PostgreSQL's own `COPY (the same query) TO STDOUT WITH CSV` into a file;
 * 4. writes medians and ratios into bench/RESULTS.md, section "## Export".
 *
 * Sizes: BENCH_EVENTS (default 2,100,000), BENCH_USERS (20,000), BENCH_DAYS (91), BENCH_ROUNDS (3).
 */
import { Effect, Exit, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pipeline } from "node:stream/promises"
import pg from "pg"
import { to as copyTo } from "pg-copy-streams"
import { defaultDemoOptions, demoDays, type DemoEvent, type DemoOptions } from "../../src/cli/demoData"
import { resolveDateRange } from "../../src/domain/datePoint"
import { exportRowsStatement } from "../../src/services/usage/3-UsageLedger/exportQueries"
import { startEmbeddedPostgres } from "../../src/platform/EmbeddedPostgres"
import { type ExportBenchResult, writeSection } from "./results"
import { builtEntry, ensureBuilt, startFlags } from "../../test/support/builtService"
import { type BenchService, startService } from "./service"

const numberFromEnv = (name: string, fallback: number): number => {
  const raw = process.env[name]
  return raw === undefined || raw === "" ? fallback : Number(raw)
}

const options: DemoOptions = {
  ...defaultDemoOptions,
  seed: 7,
  users: numberFromEnv("BENCH_USERS", 20_000),
  days: numberFromEnv("BENCH_DAYS", 91),
  events: numberFromEnv("BENCH_EVENTS", 2_100_000),
  // Two messages per active user-day: about one CSV row of the users export per two events.
  messagesPerActiveDay: 2,
  startDate: "2026-01-01",
  zone: "Europe/Berlin"
}
const rounds = numberFromEnv("BENCH_ROUNDS", 3)
const batchSize = 10_000
const exportRequest = {
  from: { date: options.startDate, timezone: options.zone },
  to: { date: "2026-06-01", timezone: options.zone }
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** The demo events as request bodies of 10,000, generated lazily. */
function* batches(): Generator<string> {
  let pending: Array<DemoEvent> = []
  for (const day of demoDays(options)) {
    for (const event of day) {
      pending.push(event)
      if (pending.length === batchSize) {
        yield JSON.stringify({ events: pending })
        pending = []
      }
    }
  }
  if (pending.length > 0) yield JSON.stringify({ events: pending })
}

const progress = (text: string) => process.stderr.write(`\r${text.padEnd(100)}`)

const ingestAll = async (service: BenchService, workspaceId: string) => {
  let accepted = 0
  const started = performance.now()
  // One request in flight while the next batch is generated.
  let inFlight: Promise<void> = Promise.resolve()
  for (const body of batches()) {
    await inFlight
    inFlight = service.request("POST", `/admin/workspaces/${workspaceId}/events`, body).then((answer) => {
      accepted += (answer as { accepted: number }).accepted
      const seconds = (performance.now() - started) / 1000
      progress(`ingesting: ${accepted.toLocaleString("en")} events, ${Math.round(accepted / seconds).toLocaleString("en")} events/s`)
    })
  }
  await inFlight
  process.stderr.write("\n")
  return { events: accepted, seconds: (performance.now() - started) / 1000 }
}

interface Variant {
  readonly name: string
  readonly service: BenchService
  readonly runs: Array<{ seconds: number; peakRssMb: number; startRssMb: number; rows: number; bytes: number }>
}

const main = async () => {
  const scope = Effect.runSync(Scope.make())
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-export-"))
  fs.chmodSync(workDir, 0o755)
  const services: Array<BenchService> = []
  try {
    const { url } = await Effect.runPromise(
      startEmbeddedPostgres({
        directory: path.join(workDir, "postgres"),
        password: Redacted.make("bench-password"),
        deleteOnStop: true
      }).pipe(Scope.extend(scope))
    )
    const databaseUrl = Redacted.value(url)
    ensureBuilt()
    const start = async (command: ReadonlyArray<string>, dataDir: string) => {
      const service = await startService({ command, databaseUrl, dataDir: path.join(workDir, dataDir) })
      services.push(service)
      return service
    }
    const entry = builtEntry("main")
    const variants: Array<Variant> = [
      { name: `npm start: \`${startFlags.join(" ")}\``, service: await start(entry, "data-start"), runs: [] },
      { name: "Node's default heap sizing", service: await start(entry.filter((arg) => !startFlags.includes(arg)), "data-default"), runs: [] }
    ]
    const idleRssMb = variants.map((variant) => variant.service.rssMb())
    const admin = variants[0]!.service
    const workspace = (await admin.request("POST", "/admin/workspaces", { name: "Bench" })) as { id: string }
    const key = (await admin.request("POST", `/admin/workspaces/${workspace.id}/api-keys`, {
      name: "bench",
      scopes: ["USAGE_EXPORT_API"]
    })) as { key: string }

    const ingestion = await ingestAll(admin, workspace.id)
    const db = new pg.Client({ connectionString: databaseUrl })
    await db.connect()
    await db.query("VACUUM ANALYZE")

    // The COPY baseline runs the very query the service runs, its parameters inlined.
    const range = resolveDateRange(exportRequest.from, exportRequest.to)
    if (range._tag === "Left") throw new Error(range.left.message)
    const statement = exportRowsStatement("users", {
      workspaceId: workspace.id,
      from: range.right.from.instant,
      to: range.right.to.instant,
      zone: range.right.zone,
      catalog: []
    })
    const inlined = statement.text.replace(/\$(\d+)/g, (_, n: string) => db.escapeLiteral(statement.params[Number(n) - 1] ?? ""))
    const copyFile = path.join(workDir, "copy.csv")
    const copyRuns: Array<{ seconds: number; bytes: number }> = []

    const runService = async (variant: Variant) => {
      const startRssMb = variant.service.resetPeakRss()
      const started = performance.now()
      const answer = await variant.service.exportUsers(key.key, exportRequest)
      const seconds = (performance.now() - started) / 1000
      const stored = path.join(variant.service.dataDir, "exports", answer.data.filePath)
      variant.runs.push({ seconds, peakRssMb: variant.service.peakRssMb(), startRssMb, rows: answer.data.recordCount, bytes: fs.statSync(stored).size })
      fs.rmSync(stored)
    }
    const runCopy = async () => {
      const started = performance.now()
      await pipeline(db.query(copyTo(`COPY (${inlined}) TO STDOUT WITH CSV`)), fs.createWriteStream(copyFile))
      copyRuns.push({ seconds: (performance.now() - started) / 1000, bytes: fs.statSync(copyFile).size })
      fs.rmSync(copyFile)
    }
    const steps = [() => runService(variants[0]!), () => runService(variants[1]!), runCopy]
    for (let round = 0; round < rounds; round++) {
      progress(`export round ${round + 1}/${rounds}`)
      // Rotate who goes first, so no one always gets the warmest cache.
      for (let i = 0; i < steps.length; i++) await steps[(i + round) % steps.length]!()
    }
    process.stderr.write("\n")
    const copySeconds = median(copyRuns.map((r) => r.seconds))
    const server = (await db.query<{ server_version: string }>("SHOW server_version")).rows[0]?.server_version
    await db.end()

    const result: ExportBenchResult = {
      date: new Date().toISOString().slice(0, 10),
      machine: `${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
      versions: `Node ${process.version}, PostgreSQL ${server}`,
      events: ingestion.events,
      ingestSeconds: ingestion.seconds,
      rows: variants[0]!.runs[0]?.rows ?? 0,
      bytes: variants[0]!.runs[0]?.bytes ?? 0,
      copyBytes: copyRuns[0]?.bytes ?? 0,
      rounds,
      copySeconds,
      copyRuns: copyRuns.map((r) => r.seconds),
      variants: variants.map((variant, index) => ({
        name: variant.name,
        seconds: median(variant.runs.map((r) => r.seconds)),
        runs: variant.runs.map((r) => r.seconds),
        idleRssMb: idleRssMb[index]!,
        startRssMb: Math.max(...variant.runs.map((r) => r.startRssMb)),
        peakRssMb: Math.max(...variant.runs.map((r) => r.peakRssMb))
      }))
    }
    writeSection(result)
    console.log(JSON.stringify(result, null, 2))
  } finally {
    for (const service of services) await service.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    fs.rmSync(workDir, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
