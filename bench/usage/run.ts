/**
 * Usage overview benchmark (`npm run bench:usage`). On a fresh embedded PostgreSQL:
 *
 * 1. seeds one workspace with BENCH_MESSAGES platform messages (default 2,000,000, 5,000 users, six
 *    models, office hours heavier) and BENCH_REQUESTS forwarded API requests (1,000,000, five keys,
 *    four families) over 90 days, each with one `COPY … FROM STDIN`: the rollup triggers of
 *    sql/0008_usage_rollups.sql run on those statements as they would on ingestion;
 * 2. measures the trigger's cost on ingestion: 200,000 more messages copied with and without it;
 * 3. times the console's overview calls through the UsageOverview service (the query plus decoding
 *    in Node: the server time of the handler, without HTTP) for 90 days in Europe/Berlin: usage by
 *    model, by API key and by family, and platform activity (messages, active users) — a first cold
 *    run, then the median of BENCH_ROUNDS warm runs; and the same numbers straight from the ledger,
 *    the baseline the rollups replace;
 * 4. writes the figures into bench/RESULTS.md, section "## Usage overview".
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import pg from "pg"
import { from as copyFrom } from "pg-copy-streams"
import { startEmbeddedPostgres } from "../../src/platform/EmbeddedPostgres"
import { runMigrations } from "../../src/platform/Migrations"
import { type UsageGroupBy, UsageOverview } from "../../src/services/usage/4-UsageOverview"

const numberFromEnv = (name: string, fallback: number): number => {
  const raw = process.env[name]
  return raw === undefined || raw === "" ? fallback : Number(raw)
}
const messages = numberFromEnv("BENCH_MESSAGES", 2_000_000)
const requests = numberFromEnv("BENCH_REQUESTS", 1_000_000)
const users = numberFromEnv("BENCH_USERS", 5_000)
const rounds = numberFromEnv("BENCH_ROUNDS", 7)
const days = 90
const start = Date.parse("2026-01-01T00:00:00Z")
const range = { from: "2026-01-01", to: "2026-04-01", timezone: "Europe/Berlin" }

/** A small deterministic generator (mulberry32): the same data on every run. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** An instant in the 90 days, weekdays and office hours (UTC 07–17) more likely. */
const instant = (next: () => number, onDay?: number): Date => {
  for (;;) {
    const day = onDay ?? Math.floor(next() * days)
    const weekday = new Date(start + day * 86_400_000).getUTCDay()
    const office = next() < 0.8
    const hour = office ? 7 + Math.floor(next() * 10) : Math.floor(next() * 24)
    if ((weekday === 0 || weekday === 6) && next() > 0.2) continue
    return new Date(start + day * 86_400_000 + hour * 3_600_000 + Math.floor(next() * 3_600_000))
  }
}

const chatModels = ["chatgen-4o", "chatgen-4o-mini", "chatgen-5", "o3", "assistantmodel-sonnet-4-5-20250929", "codemodel-2501"]
const families = [
  { endpoint: "chat_completions", provider: "provider_a", model: "chatgen-4o" },
  { endpoint: "embeddings", provider: "provider_a", model: "text-embedding-ada-002" },
  { endpoint: "messages", provider: "provider_b", model: "assistantmodel-sonnet-4-5-20250929" },
  { endpoint: "fim_completions", provider: "provider_c", model: "codemodel-2501" }
]

/** Lines of a COPY text stream, 10,000 at a time. */
function* lines(count: number, line: (i: number) => string): Generator<string> {
  const chunk: Array<string> = []
  for (let i = 0; i < count; i++) {
    chunk.push(line(i))
    if (chunk.length === 10_000) {
      yield chunk.join("")
      chunk.length = 0
    }
  }
  if (chunk.length > 0) yield chunk.join("")
}

const copy = async (db: pg.Client, statement: string, source: Iterable<string>): Promise<number> => {
  const began = performance.now()
  await pipeline(Readable.from(source), db.query(copyFrom(statement)))
  return (performance.now() - began) / 1000
}

const messageLines = (workspaceId: string, userRefs: ReadonlyArray<string>, count: number, seed: number, prefix: string, onDay?: number) => {
  const next = random(seed)
  return lines(count, (i) => {
    const at = instant(next, onDay).toISOString()
    const user = userRefs[Math.floor(next() * next() * userRefs.length)]!
    const model = chatModels[Math.floor(next() * chatModels.length)]!
    return `${workspaceId}\t${at}\t${user}\t${50 + Math.floor(next() * 2000)}\t${20 + Math.floor(next() * 800)}\t${prefix}${i}\t${model}\n`
  })
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const timed = async (run: () => Promise<unknown>) => {
  const times: Array<number> = []
  for (let i = 0; i <= rounds; i++) {
    const began = performance.now()
    await run()
    times.push(performance.now() - began)
  }
  return { cold: times[0]!, warm: median(times.slice(1)), max: Math.max(...times.slice(1)) }
}

const main = async () => {
  const scope = Effect.runSync(Scope.make())
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-usage-"))
  fs.chmodSync(workDir, 0o755)
  try {
    const { url } = await Effect.runPromise(
      startEmbeddedPostgres({ directory: path.join(workDir, "postgres"), password: Redacted.make("bench-password"), deleteOnStop: true }).pipe(
        Scope.extend(scope)
      )
    )
    const sqlLayer = PgClient.layer({ url, maxConnections: 4 })
    await Effect.runPromise(Effect.scoped(Effect.provide(runMigrations(), sqlLayer)))
    const db = new pg.Client({ connectionString: Redacted.value(url) })
    await db.connect()

    const workspace = (await db.query<{ id: string }>("INSERT INTO workspaces (name) VALUES ('Bench') RETURNING id")).rows[0]!.id
    const other = (await db.query<{ id: string }>("INSERT INTO workspaces (name) VALUES ('Ingest') RETURNING id")).rows[0]!.id
    const refs = async (ws: string) =>
      (await db.query<{ id: string }>(
        "INSERT INTO workspace_users (workspace_id, external_id) SELECT $1, 'u' || g FROM generate_series(1, $2) g RETURNING id",
        [ws, users]
      )).rows.map((r) => r.id)
    const userRefs = await refs(workspace)
    const keys = (await db.query<{ id: string }>(
      `INSERT INTO api_keys (workspace_id, name, display_prefix, key_hash, scopes)
       SELECT $1, 'key ' || g, 'wsk_…', sha256(('k' || g)::bytea), ARRAY['COMPLETION_API'] FROM generate_series(1, 5) g RETURNING id`,
      [workspace]
    )).rows.map((r) => r.id)

    const messageColumns = "message_events (workspace_id, occurred_at, user_ref, input_tokens, output_tokens, event_id, model)"
    console.log(`seeding ${messages.toLocaleString("en")} messages…`)
    const messagesSeconds = await copy(db, `COPY ${messageColumns} FROM STDIN`, messageLines(workspace, userRefs, messages, 1, "m"))
    console.log(`  ${messagesSeconds.toFixed(1)} s; seeding ${requests.toLocaleString("en")} API requests…`)
    const next = random(2)
    const requestsSeconds = await copy(
      db,
      "COPY api_requests (workspace_id, created_at, key_id, endpoint, provider, region, model, status, input_tokens, output_tokens, cost_usd, latency_ms) FROM STDIN",
      lines(requests, () => {
        const family = families[Math.floor(next() * families.length)]!
        const status = next() < 0.03 ? 429 : 200
        const input = 100 + Math.floor(next() * 3000)
        const output = family.endpoint === "embeddings" ? 0 : Math.floor(next() * 1000)
        return `${workspace}\t${instant(next).toISOString()}\t${keys[Math.floor(next() * keys.length)]}\t${family.endpoint}\t${family.provider}\teu\t${family.model}\t${status}\t${input}\t${output}\t${((input * 2.5 + output * 10) / 1e6).toFixed(8)}\t${200 + Math.floor(next() * 2000)}\n`
      })
    )
    console.log(`  ${requestsSeconds.toFixed(1)} s; measuring the trigger's cost…`)
    const otherRefs = await refs(other)
    // The same 200,000 messages' cost three ways: no rollup trigger, the 0008 rollups only, and
    // with the 0009 active-user counts as well (what ingestion runs).
    const triggers = async (rollups: boolean, activeDays: boolean) => {
      await db.query(`ALTER TABLE message_events ${rollups ? "ENABLE" : "DISABLE"} TRIGGER message_events_rollup`)
      await db.query(`ALTER TABLE message_events ${activeDays ? "ENABLE" : "DISABLE"} TRIGGER message_events_zz_active_days`)
    }
    await triggers(false, false)
    const withoutTrigger = await copy(db, `COPY ${messageColumns} FROM STDIN`, messageLines(other, otherRefs, 200_000, 3, "a"))
    await triggers(true, false)
    const withRollups = await copy(db, `COPY ${messageColumns} FROM STDIN`, messageLines(other, otherRefs, 200_000, 4, "b"))
    await triggers(true, true)
    const withTrigger = await copy(db, `COPY ${messageColumns} FROM STDIN`, messageLines(other, otherRefs, 200_000, 5, "c"))
    // A batch as the events endpoint stores one: 1,000 messages of one (week)day, with the 0008
    // rollups only and with both (median of 5 each).
    const batch = async (round: number) => copy(db, `COPY ${messageColumns} FROM STDIN`, messageLines(other, otherRefs, 1_000, 10 + round, `e${round}-`, 40))
    const batches = async (rounds: ReadonlyArray<number>) => {
      const seconds: Array<number> = []
      for (const round of rounds) seconds.push(await batch(round))
      return median(seconds) * 1000
    }
    await triggers(true, false)
    const batchRollups = await batches([0, 1, 2, 3, 4])
    await triggers(true, true)
    const batchBoth = await batches([5, 6, 7, 8, 9])
    await db.query("VACUUM ANALYZE")
    const sizes = (await db.query<{ name: string; rows: string }>(
      `SELECT relname AS name, n_live_tup::text AS rows FROM pg_stat_user_tables
       WHERE relname LIKE 'usage\_%' ORDER BY relname`
    )).rows

    console.log("timing the overview…")
    // One runtime for all calls, as the server has: the pool is open before the first timing.
    const runtimeScope = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(Layer.buildWithScope(UsageOverview.layer.pipe(Layer.provide(sqlLayer)), runtimeScope))
    const service = Context.get(context, UsageOverview)
    const results: Array<{ name: string; cold: number; warm: number; max: number; rows: number }> = []
    for (const groupBy of ["model", "apiKey", "family"] as ReadonlyArray<UsageGroupBy>) {
      let rows = 0
      const t = await timed(async () => {
        rows = (await Effect.runPromise(service.usage(workspace, range, groupBy))).length
      })
      results.push({ name: `usage by ${groupBy}`, ...t, rows })
    }
    {
      let rows = 0
      const t = await timed(async () => {
        rows = (await Effect.runPromise(service.activity(workspace, range))).length
      })
      results.push({ name: "platform activity (messages, active users)", ...t, rows })
    }
    let activityBerlin: ReadonlyArray<{ day: string; messages: number; activeUsers: number }> = []
    {
      // India's midnights are on a half hour: every day read from the per-day counts' quarter 74.
      const kolkata = { ...range, timezone: "Asia/Kolkata" }
      let rows = 0
      const t = await timed(async () => {
        rows = (await Effect.runPromise(service.activity(workspace, kolkata))).length
      })
      results.push({ name: "platform activity in Asia/Kolkata", ...t, rows })
      activityBerlin = await Effect.runPromise(service.activity(workspace, range))
    }
    const baseline: Array<{ name: string; cold: number; warm: number; max: number; rows: number }> = []
    for (const [name, text] of [
      [
        "usage by model, from api_requests",
        `SELECT to_char(created_at AT TIME ZONE $2, 'YYYY-MM-DD') AS day, model, count(*), sum(input_tokens), sum(output_tokens), sum(cost_usd)
         FROM api_requests WHERE workspace_id = $1 AND created_at >= ($3::timestamp AT TIME ZONE $2) AND created_at < ($4::timestamp AT TIME ZONE $2)
         GROUP BY 1, 2`
      ],
      [
        "platform activity, from message_events",
        `SELECT to_char(occurred_at AT TIME ZONE $2, 'YYYY-MM-DD') AS day, count(*), count(DISTINCT user_ref), sum(input_tokens), sum(output_tokens)
         FROM message_events WHERE workspace_id = $1 AND occurred_at >= ($3::timestamp AT TIME ZONE $2) AND occurred_at < ($4::timestamp AT TIME ZONE $2)
         GROUP BY 1`
      ]
    ] as const) {
      let rows = 0
      const t = await timed(async () => {
        rows = (await db.query(text, [workspace, range.timezone, range.from, range.to])).rowCount ?? 0
      })
      baseline.push({ name, ...t, rows })
    }
    // The rollups must say what the ledger says (Berlin's range holds the March DST day).
    const ledger = (await db.query<{ day: string; messages: string; users: string }>(
      `SELECT to_char(occurred_at AT TIME ZONE $2, 'YYYY-MM-DD') AS day, count(*)::text AS messages, count(DISTINCT user_ref)::text AS users
       FROM message_events WHERE workspace_id = $1 AND occurred_at >= ($3::timestamp AT TIME ZONE $2) AND occurred_at < ($4::timestamp AT TIME ZONE $2)
       GROUP BY 1 ORDER BY 1`,
      [workspace, range.timezone, range.from, range.to]
    )).rows.map((r) => `${r.day} ${r.messages} ${r.users}`)
    const rolled = activityBerlin.map((r) => `${r.day} ${r.messages} ${r.activeUsers}`)
    if (JSON.stringify(ledger) !== JSON.stringify(rolled)) throw new Error("platform activity differs from the ledger")
    await Effect.runPromise(Scope.close(runtimeScope, Exit.void))
    await db.end()

    const ms = (value: number) => value.toFixed(1)
    const section = [
      "## Usage overview",
      "",
      `\`npm run bench:usage\`, ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ` +
      `Node ${process.version}, embedded PostgreSQL 18. One workspace: ${messages.toLocaleString("en")} platform messages ` +
      `(${users.toLocaleString("en")} users) and ${requests.toLocaleString("en")} API requests over ${days} days, seeded with COPY ` +
      `(${ms(messagesSeconds)} s and ${ms(requestsSeconds)} s, rollup triggers included). Overview of the ${days} days in ` +
      `${range.timezone}; times are the UsageOverview service's (query and decoding: the handler's server time without HTTP), ` +
      `first call and median of ${rounds} more.`,
      "",
      "| call | rows | first (ms) | median (ms) | max (ms) |",
      "| --- | ---: | ---: | ---: | ---: |",
      ...results.map((r) => `| ${r.name} | ${r.rows} | ${ms(r.cold)} | ${ms(r.warm)} | ${ms(r.max)} |`),
      "",
      "Baseline, the same numbers straight from the ledger (what the rollups replace):",
      "",
      "| query | rows | first (ms) | median (ms) | max (ms) |",
      "| --- | ---: | ---: | ---: | ---: |",
      ...baseline.map((r) => `| ${r.name} | ${r.rows} | ${ms(r.cold)} | ${ms(r.warm)} | ${ms(r.max)} |`),
      "",
      `Load average during the run: ${os.loadavg().map((l) => l.toFixed(1)).join(", ")} (other jobs shared the 2 cores: ` +
      "read the ratios to the baseline rather than the absolute times). Design: API requests and messages are summed " +
      "per workspace, key, family and model in hourly and 15-minute UTC buckets (hourly when every local midnight of " +
      "the range is on a whole UTC hour, 15-minute otherwise, e.g. Asia/Kolkata); active users are a bitmap of quarter " +
      "hours per user and UTC day, and from them (sql/0009) 96 counts per UTC day, the distinct users of the 24 " +
      "hours from each quarter hour: a 24-hour local day of any zone reads one row, a DST day the bitmaps of its " +
      "UTC days, exact in every zone. Triggers on the ledger tables' INSERT statements keep them current.",
      "",
      `Rollup rows: ${sizes.map((s) => `${s.name} ${Number(s.rows).toLocaleString("en")}`).join(", ")}. ` +
      `Ingestion cost of the triggers: 200,000 messages copied in ${ms(withoutTrigger)} s without them, ${ms(withRollups)} s with ` +
      `the 0008 rollups only, ${ms(withTrigger)} s with the 0009 active-user counts as well; a batch of 1,000 messages of one ` +
      `day (median of 5) ${ms(batchRollups)} ms with the rollups only, ${ms(batchBoth)} ms with both.`,
      ""
    ].join("\n")
    const resultsFile = path.resolve(import.meta.dirname, "../RESULTS.md")
    const existing = fs.readFileSync(resultsFile, "utf8")
    const at = existing.indexOf("\n## Usage overview\n")
    const rest = at === -1 ? "" : existing.slice(existing.indexOf("\n## ", at + 1) === -1 ? existing.length : existing.indexOf("\n## ", at + 1))
    fs.writeFileSync(resultsFile, `${(at === -1 ? existing : existing.slice(0, at)).trimEnd()}\n\n${section}${rest}`)
    console.log(section)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    fs.rmSync(workDir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
