import * as fs from "node:fs"
import * as path from "node:path"

const resultsFile = path.resolve(import.meta.dirname, "../RESULTS.md")

export interface ExportBenchResult {
  readonly date: string
  readonly machine: string
  readonly versions: string
  readonly events: number
  readonly ingestSeconds: number
  readonly rows: number
  readonly bytes: number
  readonly copyBytes: number
  readonly rounds: number
  readonly copySeconds: number
  readonly copyRuns: ReadonlyArray<number>
  readonly variants: ReadonlyArray<{
    readonly name: string
    readonly seconds: number
    readonly runs: ReadonlyArray<number>
    readonly idleRssMb: number
    readonly startRssMb: number
    readonly peakRssMb: number
  }>
}

const n = (value: number) => Math.round(value).toLocaleString("en")
const s = (value: number) => value.toFixed(2)

export const renderSection = (r: ExportBenchResult): string => `## Export

\`npm run bench:export\` — ${r.date}, ${r.machine}, ${r.versions}. One run: a fresh embedded
PostgreSQL (default settings); the service built as \`npm start\` builds it (dist/server) and run as its own
process with plain node (local storage), on the same two cores as PostgreSQL and the benchmark. ${n(r.events)} demo events
(91 days, 20,000 users, daily and weekly rhythm) ingested through the events endpoint, then the users
export of the whole range: **${n(r.rows)} rows**, ${(r.bytes / 2 ** 20).toFixed(1)} MiB of CSV. Medians of ${r.rounds} interleaved rounds.

| what | time (s) | ratio to COPY | service RSS: idle / before the export / peak during it |
|---|---|---|---|
${r.variants.map((v) => `| service (${v.name}): \`POST /export/users\`, request → file stored | ${s(v.seconds)} | ${(v.seconds / r.copySeconds).toFixed(2)}× | ${n(v.idleRssMb)} / ${n(v.startRssMb)} / **${n(v.peakRssMb)} MB** |`).join("\n")}
| PostgreSQL: \`COPY (same query) TO STDOUT WITH CSV\` → file | ${s(r.copySeconds)} | 1.00× | — |

Targets: within 1.5× of COPY; service peak RSS under 250 MB. Rounds (s): ${r.variants.map((v) => `${v.name}: ${v.runs.map(s).join(", ")}`).join("; ")}; COPY: ${r.copyRuns.map(s).join(", ")}.
The service's file is ${n(r.bytes)} bytes (header line, CRLF line ends, quoting and neutralising),
COPY's ${n(r.copyBytes)} bytes.

How: the rows query runs behind a server-side cursor (\`DECLARE … NO SCROLL CURSOR\`, 5,000 rows per
\`FETCH\`, two batches fetched ahead while the previous one is encoded and written); the count query runs
at the same time on a second connection sharing the cursor's snapshot (\`pg_export_snapshot\`), so the
1,000,000-row rule is decided before anything is written at no extra wall time. The live heap stays
small whatever the row count; with Node's default heap sizing V8 lets garbage accumulate up to a few
times the live heap before a full collection, which the process under \`npm start\`'s heap settings shows is
not retained memory.

Ingestion: ${n(r.events)} events in ${n(Math.ceil(r.events / 10_000))} requests of 10,000 events, one request in flight:
${s(r.ingestSeconds)} s, **${n(r.events / r.ingestSeconds)} events/s** (every event validated, dimensions upserted,
events inserted idempotently, one transaction per batch; the benchmark generates the next batch on the same
cores meanwhile).
`

/** Replaces the "## Export" section of bench/RESULTS.md (or appends it), keeping every other section. */
export const writeSection = (result: ExportBenchResult): void => {
  const existing = fs.existsSync(resultsFile) ? fs.readFileSync(resultsFile, "utf8") : "# Benchmark results\n"
  const section = renderSection(result)
  const start = existing.indexOf("\n## Export\n")
  if (start === -1) {
    fs.writeFileSync(resultsFile, `${existing.trimEnd()}\n\n${section}`)
    return
  }
  const next = existing.indexOf("\n## ", start + 1)
  const rest = next === -1 ? "" : existing.slice(next)
  fs.writeFileSync(resultsFile, `${existing.slice(0, start)}\n${section}${rest}`)
}
