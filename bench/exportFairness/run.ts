/**
 * Exports sharing an instance (`npm run bench:export-fairness`, issue 25): one workspace runs eight large
 * exports at once while a second exports one row and a third sends embeddings through the gateway. In one
 * run, on a fresh embedded PostgreSQL:
 *
 * 1. seeds the busy workspace with one message per user and day (BENCH_USERS users × BENCH_DAYS days) and the
 *    quiet one with a single message, each with one `COPY … FROM STDIN`;
 * 2. for each service under test — this checkout's build and, with BENCH_SERVICE_DIR, another checkout's (the
 *    code before a change) — starts it as `npm start` runs it (its dist/, its heap flags) and measures:
 *    a. idle: the 1-row users export (sequential) and embeddings (sequential, in-process simulator);
 *    b. the same while the busy workspace's eight users exports of BENCH_LARGE_DAYS days (~300,000 rows each)
 *       run: 1-row exports one after another, embeddings one after another, until the eight are answered;
 *    c. a refused export (the whole range, over BENCH_MAX_ROWS, which the service gets as EXPORT_MAX_ROWS):
 *       the first refusal and the same asked again;
 * 3. writes the figures into bench/RESULTS.md, section "## Exports sharing an instance (issue 25)".
 *
 * Targets: the 1-row export under 1 s and embeddings p50 within 2× of idle while the eight run.
 */
import { spawnSync } from "node:child_process"
import { Effect, Exit, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import pg from "pg"
import { from as copyFrom } from "pg-copy-streams"
import { startEmbeddedPostgres } from "../../src/platform/EmbeddedPostgres"
import { builtEntry, ensureBuilt } from "../../test/support/builtService"
import { type BenchService, startService } from "../export/service"
import { cpuSeconds } from "../gateway/processes"
import { writeSection } from "../results"

const numberFromEnv = (name: string, fallback: number): number => {
  const raw = process.env[name]
  return raw === undefined || raw === "" ? fallback : Number(raw)
}
const users = numberFromEnv("BENCH_USERS", 5_000)
const days = numberFromEnv("BENCH_DAYS", 122)
const largeDays = numberFromEnv("BENCH_LARGE_DAYS", 61)
const maxRows = numberFromEnv("BENCH_MAX_ROWS", 500_000)
const idleSeconds = numberFromEnv("BENCH_IDLE_SECONDS", 5)
const largeExports = 8
const zone = "UTC"
const start = Date.parse("2026-01-01T00:00:00Z")
const isoDate = (day: number) => new Date(start + day * 86_400_000).toISOString().slice(0, 10)
const range = (fromDay: number, toDay: number) => ({
  from: { date: isoDate(fromDay), timezone: zone },
  to: { date: isoDate(toDay), timezone: zone }
})

interface Sample {
  readonly ms: number
  readonly status: number
}

const percentile = (values: ReadonlyArray<number>, q: number): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1)))]!
}
const round = (ms: number) => Math.round(ms * 10) / 10

const timedPost = async (service: BenchService, route: string, key: string, body: unknown): Promise<Sample & { readonly answer: any }> => {
  const began = performance.now()
  const response = await fetch(`${service.base}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const answer: unknown = await response.json()
  return { ms: performance.now() - began, status: response.status, answer }
}

const embeddingsBody = { model: "text-embedding-ada-002", input: "The quick brown fox jumps over the lazy dog." }

/** Sequential calls until `done()` (or for `seconds`), one after another. */
const loop = async (call: () => Promise<Sample>, until: () => boolean, pauseMs = 0): Promise<Array<Sample>> => {
  const samples: Array<Sample> = []
  while (!until()) {
    samples.push(await call())
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs))
  }
  return samples
}

const copy = async (db: pg.Client, statement: string, lines: Iterable<string>) => {
  await pipeline(Readable.from(lines), db.query(copyFrom(statement)))
}

/** One message per user and day (office hours), 10,000 lines a chunk. */
function* busyMessages(workspaceId: string, userRefs: ReadonlyArray<string>): Generator<string> {
  let chunk = ""
  let n = 0
  for (let day = 0; day < days; day++) {
    for (let u = 0; u < userRefs.length; u++) {
      const at = new Date(start + day * 86_400_000 + (8 + (u % 9)) * 3_600_000 + (u % 3_600) * 1_000).toISOString()
      chunk += `${workspaceId}\t${at}\t${userRefs[u]}\t${100 + (u % 900)}\t${50 + (u % 400)}\tm${day}-${u}\tchatgen-4o\n`
      if (++n % 10_000 === 0) {
        yield chunk
        chunk = ""
      }
    }
  }
  if (chunk !== "") yield chunk
}

interface Variant {
  readonly name: string
  readonly cwd: string
}

interface VariantResult {
  readonly name: string
  readonly idle: { readonly oneRow: ReadonlyArray<number>; readonly embeddings: ReadonlyArray<number> }
  readonly loaded: {
    readonly oneRow: ReadonlyArray<Sample>
    readonly embeddings: ReadonlyArray<number>
    readonly large: ReadonlyArray<Sample & { readonly rows: number | undefined; readonly code: string | undefined }>
    readonly seconds: number
    /** CPU seconds of the service's process while the eight ran. */
    readonly cpu: number
  }
  readonly refusal: { readonly first: Sample & { readonly code: string | undefined }; readonly again: ReadonlyArray<number> }
}

const measure = async (variant: Variant, databaseUrl: string, workDir: string, ids: { busy: string; quiet: string; embed: string }): Promise<VariantResult> => {
  const service = await startService({
    command: builtEntry("main"),
    cwd: variant.cwd,
    databaseUrl,
    dataDir: path.join(workDir, `data-${variant.name}`),
    env: { EXPORT_MAX_ROWS: String(maxRows) }
  })
  try {
    const key = async (workspaceId: string, scope: string) =>
      ((await service.request("POST", `/admin/workspaces/${workspaceId}/api-keys`, { name: `bench ${variant.name}`, scopes: [scope] })) as { key: string }).key
    const busyKey = await key(ids.busy, "USAGE_EXPORT_API")
    const quietKey = await key(ids.quiet, "USAGE_EXPORT_API")
    const embedKey = await key(ids.embed, "COMPLETION_API")
    const oneRow = () => timedPost(service, "/export/users", quietKey, range(0, 1))
    const embedding = () => timedPost(service, "/provider_a/eu/v1/embeddings", embedKey, embeddingsBody)
    // Warm up both paths (first requests compile and fill caches).
    for (let i = 0; i < 3; i++) {
      await oneRow()
      await embedding()
    }

    process.stderr.write(`${variant.name}: idle…\n`)
    const idleEnd = Date.now() + idleSeconds * 1000
    const idleEmbeddings = await loop(embedding, () => Date.now() > idleEnd)
    const idleOneRow = await loop(oneRow, (() => {
      let n = 0
      return () => n++ >= 7
    })())

    process.stderr.write(`${variant.name}: ${largeExports} large exports of ${largeDays} days…\n`)
    let finished = 0
    const began = performance.now()
    const cpuBefore = cpuSeconds([service.pid])
    const large = Array.from({ length: largeExports }, () =>
      timedPost(service, "/export/users", busyKey, range(0, largeDays)).then((sample) => {
        finished += 1
        process.stderr.write(`  large export answered ${sample.status} after ${(sample.ms / 1000).toFixed(1)} s\n`)
        return { ms: sample.ms, status: sample.status, rows: sample.answer?.data?.recordCount as number | undefined, code: sample.answer?.error?.code as string | undefined }
      }))
    // Give the eight a moment to be admitted and start reading.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const allDone = () => finished === largeExports
    const [loadedOneRow, loadedEmbeddings, largeSamples] = await Promise.all([
      loop(oneRow, allDone, 500),
      loop(embedding, allDone),
      Promise.all(large)
    ])
    const loadSeconds = (performance.now() - began) / 1000
    const loadCpu = cpuSeconds([service.pid]) - cpuBefore

    process.stderr.write(`${variant.name}: refusals…\n`)
    const refused = await timedPost(service, "/export/users", busyKey, range(0, days))
    const again: Array<number> = []
    for (let i = 0; i < 3; i++) again.push((await timedPost(service, "/export/users", busyKey, range(0, days))).ms)

    return {
      name: variant.name,
      idle: { oneRow: idleOneRow.map((s) => s.ms), embeddings: idleEmbeddings.map((s) => s.ms) },
      loaded: { oneRow: loadedOneRow, embeddings: loadedEmbeddings.map((s) => s.ms), large: largeSamples, seconds: loadSeconds, cpu: loadCpu },
      refusal: { first: { ms: refused.ms, status: refused.status, code: refused.answer?.error?.code }, again }
    }
  } finally {
    await service.stop()
  }
}

const main = async () => {
  const scope = Effect.runSync(Scope.make())
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-export-fairness-"))
  fs.chmodSync(workDir, 0o755)
  try {
    const { url } = await Effect.runPromise(
      startEmbeddedPostgres({ directory: path.join(workDir, "postgres"), password: Redacted.make("bench-password"), deleteOnStop: true }).pipe(
        Scope.extend(scope)
      )
    )
    const databaseUrl = Redacted.value(url)
    ensureBuilt()
    const variants: Array<Variant> = []
    const before = process.env.BENCH_SERVICE_DIR
    if (before !== undefined && before !== "") {
      const built = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: before, encoding: "utf8" })
      if (built.status !== 0) throw new Error(`building ${before} failed:\n${built.stderr}${built.stdout}`)
      // The older schema first: the newer build migrates on top of it.
      variants.push({ name: "before", cwd: before })
    }
    variants.push({ name: "after", cwd: path.resolve(import.meta.dirname, "../..") })

    // The first service migrates the database; the data is seeded once, under it.
    const first = await startService({ command: builtEntry("main"), cwd: variants[0]!.cwd, databaseUrl, dataDir: path.join(workDir, "data-seed") })
    const workspace = async (name: string, settings: unknown = {}) =>
      ((await first.request("POST", "/admin/workspaces", { name, settings })) as { id: string }).id
    const ids = {
      busy: await workspace("Busy"),
      quiet: await workspace("Quiet"),
      embed: await workspace("Embeddings", { rateLimits: { families: { embeddings: { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000 } } } })
    }
    await first.stop()
    const db = new pg.Client({ connectionString: databaseUrl })
    await db.connect()
    const refs = async (workspaceId: string, count: number) =>
      (await db.query<{ id: string }>(
        "INSERT INTO workspace_users (workspace_id, external_id, email, name) SELECT $1, 'u' || g, 'u' || g || '@example.com', 'User ' || g FROM generate_series(1, $2) g RETURNING id",
        [workspaceId, count]
      )).rows.map((row) => row.id)
    process.stderr.write(`seeding ${(users * days).toLocaleString("en")} messages…\n`)
    const seeded = performance.now()
    const columns = "message_events (workspace_id, occurred_at, user_ref, input_tokens, output_tokens, event_id, model)"
    await copy(db, `COPY ${columns} FROM STDIN`, busyMessages(ids.busy, await refs(ids.busy, users)))
    await copy(db, `COPY ${columns} FROM STDIN`, [`${ids.quiet}\t2026-01-01T10:00:00Z\t${(await refs(ids.quiet, 1))[0]}\t10\t20\tq1\tchatgen-4o\n`])
    await db.query("VACUUM ANALYZE")
    const seedSeconds = (performance.now() - seeded) / 1000
    const server = (await db.query<{ server_version: string }>("SHOW server_version")).rows[0]?.server_version
    await db.end()

    const results: Array<VariantResult> = []
    for (const variant of variants) results.push(await measure(variant, databaseUrl, workDir, ids))
    console.log(JSON.stringify(results.map((r) => ({ ...r, loaded: { ...r.loaded, embeddings: r.loaded.embeddings.length } })), null, 2))
    report(results, { seedSeconds, server: server ?? "?" })
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    fs.rmSync(workDir, { recursive: true, force: true })
  }
}

const report = (results: ReadonlyArray<VariantResult>, facts: { readonly seedSeconds: number; readonly server: string }) => {
  const load = os.loadavg().map((n) => n.toFixed(1)).join(", ")
  const row = (r: VariantResult) => {
    const idleEmbed = percentile(r.idle.embeddings, 0.5)
    const loadedEmbed = percentile(r.loaded.embeddings, 0.5)
    const oneRow = r.loaded.oneRow.map((s) => s.ms)
    const large = r.loaded.large
    const statuses = [...new Set(large.map((s) => `${s.status}${s.code ? ` ${s.code}` : ""}`))]
      .map((status) => `${large.filter((s) => `${s.status}${s.code ? ` ${s.code}` : ""}` === status).length} × ${status}`).join(", ")
    return `| ${r.name} | ${round(percentile(r.idle.oneRow, 0.5))} | ${round(percentile(oneRow, 0.5))} / **${round(Math.max(...oneRow))}** (${oneRow.length}) | ` +
      `${round(idleEmbed)} | **${round(loadedEmbed)}** (${(loadedEmbed / idleEmbed).toFixed(2)}×) / ${round(percentile(r.loaded.embeddings, 0.9))} / ${round(Math.max(...r.loaded.embeddings))} (${r.loaded.embeddings.length}) | ` +
      `${statuses}; ${(Math.min(...large.map((s) => s.ms)) / 1000).toFixed(1)}–${(Math.max(...large.map((s) => s.ms)) / 1000).toFixed(1)} s | ` +
      `${r.loaded.cpu.toFixed(1)} s in ${r.loaded.seconds.toFixed(1)} s | ` +
      `${round(r.refusal.first.ms)} (${r.refusal.first.status}) / ${r.refusal.again.map(round).join(", ")} |`
  }
  const rows = results[0]?.loaded.large.find((s) => s.rows !== undefined)?.rows
  writeSection(
    "Exports sharing an instance (issue 25)",
    `\`npm run bench:export-fairness\` — ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? "cpu"}, ` +
      `Node ${process.version}, PostgreSQL ${facts.server}. One embedded PostgreSQL; the service built and run as \`npm start\` runs it ` +
      `(its own process, local storage, the in-process simulator as upstream), on the same cores as PostgreSQL and the benchmark. ` +
      `A busy workspace with ${(users * days).toLocaleString("en")} messages (one per user and day, ${users.toLocaleString("en")} users, ${days} days, ` +
      `seeded with COPY in ${facts.seedSeconds.toFixed(0)} s) runs ${largeExports} users exports of ${largeDays} days at once ` +
      `(${rows?.toLocaleString("en") ?? "~300,000"} rows each); meanwhile a quiet workspace exports its 1 row, one export after another ` +
      `(0.5 s apart), and a third workspace sends embeddings one after another. Idle: the same calls before the eight start ` +
      `(${idleSeconds} s of embeddings, 8 exports). Refusal: the busy workspace's whole range (${(users * days).toLocaleString("en")} rows) ` +
      `over \`EXPORT_MAX_ROWS=${maxRows.toLocaleString("en")}\` (lowered so that the refused range needs only this data), first and asked ` +
      `again three times. "before" is the same script with \`BENCH_SERVICE_DIR\` at a checkout of the code before the change. ` +
      `Load average when written: ${load}.\n\n` +
      "| service | 1-row export idle: p50 ms | … during the eight: p50 / max ms (exports) | embeddings idle: p50 ms | … during the eight: p50 (× idle) / p90 / max ms (requests) | the eight: answers; durations | service CPU while they ran | refused export: first / again ms |\n" +
      "|---|---|---|---|---|---|---|---|\n" +
      results.map(row).join("\n") +
      "\n\nTargets: the 1-row export under 1 s, embeddings p50 within 2× of idle, while the eight run. The service's CPU " +
      "includes the probes' requests (the after build answered many more of them in the same time).\n\n" +
      "How (after): the busy workspace runs two exports at a time (`EXPORT_CONCURRENCY_PER_WORKSPACE`), so the quiet " +
      "workspace's export finds one of the instance's four slots free; PostgreSQL writes the CSV lines (`usage_csv_text`), so " +
      "the service reads one text a row instead of parsing and encoding every cell; the count behind the row limit stops " +
      "at the first day past it and the rows query is cancelled at once; a refused range is remembered (\"again\")."
  )
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
