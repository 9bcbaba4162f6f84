/**
 * The ledger's request inserts on a real embedded PostgreSQL (`npx tsx bench/usage/insertRequests.ts`): CPU of the
 * PostgreSQL processes (all of them: the backend, WAL writer, checkpointer, autovacuum; /proc/<pid>/stat) and of this
 * process (the driver, the batch's JSON) per row, and rows a second, for statement variants of the same batch
 * (records shaped as the recorder queues them, one workspace and key as in the gateway benchmark). Default server
 * settings, as the service runs it. Variants interleaved round by round. BENCH_ROWS (rows per variant and round,
 * 20000), BENCH_ROUNDS (3), BENCH_BATCHES (comma-separated batch sizes, "100,1000").
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startEmbeddedPostgres } from "../../src/platform/EmbeddedPostgres"
import { runMigrations } from "../../src/platform/Migrations"
import { apiRequestRowsJson, makePostgresLedger } from "../../src/services/usage/3-UsageLedger/postgres"
import type { ApiRequestRow } from "../../src/services/usage/3-UsageLedger/contract"

const rowsPerRound = Number(process.env.BENCH_ROWS ?? "20000")
const rounds = Number(process.env.BENCH_ROUNDS ?? "3")
const batchSizes = (process.env.BENCH_BATCHES ?? "100,1000").split(",").map(Number)
const ticksPerSecond = 100

/** CPU seconds of a process and its children still running (the postmaster's backends and workers). */
const postgresCpu = (postmaster: number): number => {
  let ticks = 0
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      const ppid = Number(fields[1])
      if (Number(entry) !== postmaster && ppid !== postmaster) continue
      // utime, stime, and the times of children it waited for (exited autovacuum workers).
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
    } catch {
      // Gone meanwhile.
    }
  }
  return ticks / ticksPerSecond
}

/** The ledger's own rows. */
const snakeRows = apiRequestRowsJson

const snakeInsert = (fn: string) => `
  INSERT INTO api_requests (record_id, workspace_id, key_id, endpoint, provider, region, model, status, outcome,
                            stream, input_tokens, output_tokens, cost_usd, clamped, latency_ms, request_id,
                            created_at, byok, deployment)
  SELECT record_id, workspace_id, key_id, endpoint, provider, region, model, status, outcome, stream,
         input_tokens, output_tokens, cost_usd, clamped, latency_ms, request_id, created_at, byok, deployment
  FROM ${fn}($1::${fn.startsWith("jsonb") ? "jsonb" : "json"}) AS r(
    record_id uuid, workspace_id uuid, key_id uuid, endpoint text, provider text, region text, model text,
    status smallint, outcome text, stream boolean, input_tokens integer, output_tokens integer,
    cost_usd numeric, clamped boolean, latency_ms integer, request_id text, created_at timestamptz, byok boolean,
    deployment text)
  ON CONFLICT (workspace_id, record_id) DO NOTHING`

const camelInsert = (fn: string) => `
  INSERT INTO api_requests (record_id, workspace_id, key_id, endpoint, provider, region, model, status, outcome,
                            stream, input_tokens, output_tokens, cost_usd, clamped, latency_ms, request_id,
                            created_at, byok, deployment)
  SELECT "recordId", "workspaceId", "keyId", endpoint, provider, region, model, status, outcome, stream,
         "inputTokens", "outputTokens", "costUsd", clamped, round("latencyMs"), "requestId", "createdAt", byok, deployment
  FROM ${fn}($1::${fn.startsWith("jsonb") ? "jsonb" : "json"}) AS r(
    "recordId" uuid, "workspaceId" uuid, "keyId" uuid, endpoint text, provider text, region text, model text,
    status smallint, outcome text, stream boolean, "inputTokens" integer, "outputTokens" integer,
    "costUsd" numeric, clamped boolean, "latencyMs" numeric, "requestId" text, "createdAt" timestamptz, byok boolean,
    deployment text)
  ON CONFLICT (workspace_id, record_id) DO NOTHING`

interface Variant {
  readonly name: string
  readonly insert: (sql: SqlClient.SqlClient, batch: ReadonlyArray<ApiRequestRow>) => Effect.Effect<unknown, unknown>
  readonly setup?: string
  readonly teardown?: string
}

const sqlFile = (name: string) => fs.readFileSync(path.resolve(import.meta.dirname, "../../sql", name), "utf8")

const variants: ReadonlyArray<Variant> = [
  {
    name: "ledger's insertRequests (this build)",
    insert: (sql, batch) => makePostgresLedger(sql).insertRequests(batch)
  },
  { name: "jsonb_to_recordset, snake_case rows", insert: (sql, batch) => sql.unsafe(snakeInsert("jsonb_to_recordset"), [snakeRows(batch)]) },
  { name: "json_to_recordset, snake_case rows", insert: (sql, batch) => sql.unsafe(snakeInsert("json_to_recordset"), [snakeRows(batch)]) },
  { name: "jsonb_to_recordset, the records as they are", insert: (sql, batch) => sql.unsafe(camelInsert("jsonb_to_recordset"), [JSON.stringify(batch)]) },
  {
    name: "ledger's insertRequests, the rollup trigger of sql/0012 (two groupings of the batch)",
    insert: (sql, batch) => makePostgresLedger(sql).insertRequests(batch),
    setup: sqlFile("0012_usage_rollups_byok.sql").slice(sqlFile("0012_usage_rollups_byok.sql").indexOf("CREATE OR REPLACE FUNCTION")),
    teardown: sqlFile("0022_usage_rollup_one_pass.sql")
  },
  {
    name: "ledger's insertRequests, rollup trigger off (what the rollups cost)",
    insert: (sql, batch) => makePostgresLedger(sql).insertRequests(batch),
    setup: "ALTER TABLE api_requests DISABLE TRIGGER api_requests_rollup",
    teardown: "ALTER TABLE api_requests ENABLE TRIGGER api_requests_rollup"
  }
]

const main = Effect.gen(function*() {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "bench-insert-requests-"))
  const server = yield* startEmbeddedPostgres({ directory: path.join(directory, "cluster"), password: Redacted.make("bench"), deleteOnStop: true })
  const context = yield* Layer.build(Layer.orDie(PgClient.layer({ url: server.url, maxConnections: 1 })))
  const sql = Context.get(context, SqlClient.SqlClient)
  yield* Effect.provide(runMigrations(), context)
  const [workspace] = yield* sql<{ id: string }>`INSERT INTO workspaces (name) VALUES ('bench') RETURNING id`
  const keyId = crypto.randomUUID()
  const records = (count: number): Array<ApiRequestRow> =>
    Array.from({ length: count }, () => ({
      recordId: crypto.randomUUID(),
      workspaceId: workspace!.id,
      keyId,
      endpoint: "chat_completions",
      provider: "provider_a",
      region: "eu",
      model: "chatgen-4o",
      status: 200,
      outcome: "completed" as const,
      stream: false,
      inputTokens: 12,
      outputTokens: 20,
      costUsd: 0.00023,
      clamped: false,
      latencyMs: 1.7 + Math.random(),
      requestId: undefined,
      createdAt: new Date(),
      byok: false,
      deployment: "chatgen-4o"
    }))
  // Warm-up: the table and its indexes hold some rows, as a running service's do.
  for (let i = 0; i < 20; i++) yield* makePostgresLedger(sql).insertRequests(records(1_000))
  yield* sql`VACUUM ANALYZE api_requests`

  const results = new Map<string, Array<{ pgUs: number; nodeUs: number; rowsPerSecond: number }>>()
  for (let round = 0; round < rounds; round++) {
    for (const batchSize of batchSizes) {
      for (const variant of variants) {
        if (variant.setup !== undefined) yield* sql.unsafe(variant.setup)
        const batches = Array.from({ length: Math.ceil(rowsPerRound / batchSize) }, () => records(batchSize))
        const pgBefore = postgresCpu(server.pid)
        const nodeBefore = process.cpuUsage()
        const started = performance.now()
        for (const batch of batches) yield* variant.insert(sql, batch)
        const seconds = (performance.now() - started) / 1_000
        const node = process.cpuUsage(nodeBefore)
        // The WAL writer and checkpointer catch up a moment later.
        yield* Effect.sleep("300 millis")
        const pg = postgresCpu(server.pid) - pgBefore
        if (variant.teardown !== undefined) yield* sql.unsafe(variant.teardown)
        const rows = batches.length * batchSize
        const key = `${batchSize}\t${variant.name}`
        const list = results.get(key) ?? []
        list.push({ pgUs: (pg * 1e6) / rows, nodeUs: (node.user + node.system) / rows, rowsPerSecond: rows / seconds })
        results.set(key, list)
      }
    }
  }
  const median = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  console.log(`rows a variant and round: ${rowsPerRound}, rounds: ${rounds}, medians`)
  console.log("batch\tvariant\tPostgreSQL CPU µs a row\tnode CPU µs a row\trows a second")
  for (const [key, list] of results) {
    console.log(`${key}\t${median(list.map((r) => r.pgUs)).toFixed(1)}\t${median(list.map((r) => r.nodeUs)).toFixed(1)}\t${median(list.map((r) => r.rowsPerSecond)).toFixed(0)}`)
  }
}).pipe(Effect.scoped)

Effect.runPromise(main).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
