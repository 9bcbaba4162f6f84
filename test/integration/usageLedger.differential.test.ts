/**
 * The in-memory ledger against the PostgreSQL one on the same pseudo-random activity: every export
 * layout and every overview answer, in zones with whole-hour, half-hour and 45-minute offsets and DST
 * changes, must be the same to the last character. The contract suite (test/contracts/usageLedger.ts)
 * checks hand-computed cases; this one looks for drift where nobody computed by hand (rounding of
 * costs, rates, averages and percentiles, day cuts, orders).
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Redacted, Schema, Stream } from "effect"
import * as crypto from "node:crypto"
import { UsageEvent } from "../../src/domain/usageEvent"
import { EXPORT_KINDS, exportLayouts, type ExportKind } from "../../src/domain/exportLayouts"
import type { ExportQueryInput } from "../../src/services/usage/3-UsageLedger/exportQueries"
import { ApiKeys } from "../../src/services/identity/ApiKeys"
import { encodeValueRows } from "../../src/services/exports/ExportService/valueRows"
import { runMigrations } from "../../src/platform/Migrations"
import { type ApiRequestRow, UsageLedger } from "../../src/services/usage/3-UsageLedger/index"
import { type LocalRange, UsageOverview } from "../../src/services/usage/4-UsageOverview/index"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { freshDatabaseUrl } from "../support/database"
import { message, workflowRun } from "../support/usage"

/** Deterministic pseudo-random numbers in [0, 1). */
const random = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648

const pick = <A>(next: () => number, items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!

/** Two windows of three weeks around the DST changes of spring and autumn (either hemisphere's). */
const WINDOWS = [Date.parse("2026-03-20T00:00:00Z"), Date.parse("2026-10-20T00:00:00Z")]
const SPAN_MS = 20 * 86_400_000
const instant = (next: () => number) => pick(next, WINDOWS) + Math.floor(next() * SPAN_MS)

/** Activity in the windows, in the wire shape of the events API. */
const activity = (next: () => number) => {
  const at = () => new Date(instant(next)).toISOString()
  // Some names that CSV must quote and neutralise.
  const users = Array.from({ length: 12 }, (_, i) => ({ id: `u${i}`, email: `u${i}@example.com`, name: i % 4 === 0 ? ` =User ${i}, "the"` : `User ${i}` }))
  const named = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, name: `${prefix.toUpperCase()} ${i}` }))
  const [assistants, projects, workflows] = [named("a", 4), named("p", 3), named("w", 3)]
  const models = ["chatgen-4o", "chatgen-4o-mini", "assistantmodel-x", "codemodel-2501", "unpriced-model"]
  const events: Array<unknown> = []
  for (let i = 0; i < 1_000; i++) {
    const user = pick(next, users)
    events.push(message(`m${i}`, at(), {
      user: next() < 0.2 ? { id: user.id } : next() < 0.5 ? { ...user, email: `${user.id}.${i}@example.com` } : user,
      ...(next() < 0.6 ? { assistant: pick(next, assistants) } : {}),
      ...(next() < 0.5 ? { project: pick(next, projects) } : {}),
      model: pick(next, models),
      inputTokens: Math.floor(next() * 5_000),
      outputTokens: Math.floor(next() * 3_000),
      ...(next() < 0.7 ? { feature: pick(next, ["chat", "search", "code", "Écrire"]) } : {}),
      ...(next() < 0.6 ? { conversationId: `c${Math.floor(next() * 40)}` } : {})
    }))
  }
  for (let i = 0; i < 300; i++) {
    events.push(workflowRun(`r${i}`, at(), Math.floor(next() * 120_000), {
      workflow: pick(next, workflows),
      status: next() < 0.8 ? "succeeded" : "failed",
      ...(next() < 0.7 ? { user: pick(next, users) } : {}),
      ...(next() < 0.5 ? { project: pick(next, projects) } : {})
    }))
  }
  return events
}

const requests = (next: () => number, workspaceId: string, keys: ReadonlyArray<string>): Array<ApiRequestRow> =>
  Array.from({ length: 600 }, (_, i) => {
    const [endpoint, provider, model] = pick(next, [
      ["chat_completions", "provider_a", "chatgen-4o"],
      ["embeddings", "provider_a", "chatgen-4o-mini"],
      ["messages", "provider_b", "assistantmodel-x"],
      ["fim_completions", "provider_c", "codemodel-2501"]
    ] as const)
    return {
      recordId: crypto.randomUUID(),
      workspaceId,
      keyId: pick(next, keys),
      endpoint,
      provider,
      region: pick(next, ["eu", "us"]),
      model,
      status: pick(next, [200, 200, 200, 400, 429, 500, 499]),
      outcome: pick(next, ["completed", "completed", "failed", "cancelled"] as const),
      stream: next() < 0.5,
      inputTokens: Math.floor(next() * 10_000),
      outputTokens: Math.floor(next() * 4_000),
      // Many decimals: numeric(18, 8) rounds them, the sums round again to 6.
      costUsd: next() < 0.1 ? 0 : next() * 0.05,
      clamped: next() < 0.1,
      latencyMs: next() * 3_000,
      requestId: `req_${i}`,
      createdAt: new Date(instant(next)),
      byok: next() < 0.3,
      // Some recorded before deployments were.
      deployment: next() < 0.2 ? undefined : pick(next, ["eu-primary", "eu-fallback", "us-primary"])
    }
  })

const catalog = [
  { model: "chatgen-4o", provider: "provider_a", inputUsdPerMillion: 2.5, outputUsdPerMillion: 10 },
  { model: "chatgen-4o-mini", provider: "provider_a", inputUsdPerMillion: 0.15, outputUsdPerMillion: 0.6 },
  { model: "assistantmodel-x", provider: "provider_b", inputUsdPerMillion: 3, outputUsdPerMillion: 15 },
  { model: "codemodel-2501", provider: "provider_c", inputUsdPerMillion: 0.3, outputUsdPerMillion: 0.9 }
]

// Santiago's clocks change at midnight (a day without its first hour), Havana's autumn midnight
// happens twice (PostgreSQL takes the later one).
const zones = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham", "America/Santiago", "America/Havana"]

const windows = [
  { from: new Date("2026-03-22T05:17:00Z"), to: new Date("2026-04-06T00:00:00Z"), days: { from: "2026-03-21", to: "2026-04-08" } },
  { from: new Date("2026-10-21T00:00:00Z"), to: new Date("2026-11-08T13:00:00Z"), days: { from: "2026-10-20", to: "2026-11-10" } }
]

/** Stores the activity in a backing and reads every answer it gives. */
const answers = (workspaceId: string, keys: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const ledger = yield* UsageLedger
    const overview = yield* UsageOverview
    const events = yield* Effect.orDie(Schema.decodeUnknown(Schema.Array(UsageEvent))(activity(random(11))))
    // In batches, out of order: the late ones must not bring old emails back.
    for (let b = 4; b >= 0; b--) yield* ledger.ingest(workspaceId, events.filter((_, i) => i % 5 === b))
    const rows = requests(random(23), workspaceId, keys)
    for (let b = 0; b < rows.length; b += 64) yield* ledger.insertRequests(rows.slice(b, b + 64))
    const results = new Map<string, unknown>()
    for (const zone of zones) {
      for (const [w, window] of windows.entries()) {
        const input: ExportQueryInput = { workspaceId, from: window.from, to: window.to, zone, catalog }
        for (const kind of EXPORT_KINDS) {
          const read = yield* Effect.scoped(Effect.flatMap(ledger.readExport(kind, input, { maxRows: 1_000_000 }), (r) =>
            Effect.map(Stream.runCollect(r.rows), (batches) => ({
              total: r.total,
              csv: Chunk.toReadonlyArray(batches).map((b) => encodeValueRows(b, exportLayouts[kind as ExportKind])).join("")
            }))))
          results.set(`${kind} ${zone} ${w}`, read)
          // The lines as the ledger encodes them: on PostgreSQL, the database's usage_csv_text.
          const lines = yield* Effect.scoped(Effect.flatMap(ledger.readExportCsv(kind, input, { maxRows: 1_000_000 }), (r) =>
            Effect.map(Stream.runCollect(r.lines), (batches) => ({ total: r.total, lines: Chunk.toReadonlyArray(batches).flat() }))))
          expect(lines.lines.map((line) => `${line}\r\n`).join(""), `${kind} ${zone} ${w}`).toBe(read.csv)
          results.set(`${kind} csv ${zone} ${w}`, lines)
        }
        const range: LocalRange = { ...window.days, timezone: zone }
        for (const groupBy of ["model", "family"] as const) results.set(`usage ${groupBy} ${zone} ${w}`, yield* overview.usage(workspaceId, range, groupBy))
        // Key ids differ between the two backings' runs: API-key groups are compared by the key's name.
        const byKey = yield* overview.usage(workspaceId, range, "apiKey")
        results.set(
          `usage apiKey ${zone} ${w}`,
          byKey.map(({ group: _id, ...row }) => row).sort((a, b) => a.day.localeCompare(b.day) || (a.label ?? "").localeCompare(b.label ?? ""))
        )
        results.set(`activity ${zone} ${w}`, yield* overview.activity(workspaceId, range))
      }
    }
    return results
  })

const Database = Layer.effectDiscard(runMigrations()).pipe(
  Layer.provideMerge(
    Layer.unwrapEffect(Effect.map(Effect.promise(freshDatabaseUrl), (url) => PgClient.layer({ url: Redacted.make(url), maxConnections: 4 })))
  )
)

describe("the in-memory ledger against PostgreSQL", () => {
  it.live("gives the same exports and overview answers on the same activity", () =>
    Effect.gen(function*() {
      const onPostgres = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [workspace] = yield* sql<{ id: string }>`INSERT INTO workspaces (name) VALUES ('differential') RETURNING id`
        const keys: Array<string> = []
        for (const name of ["first", "second", "third"]) {
          const [key] = yield* sql<{ id: string }>`INSERT INTO api_keys (workspace_id, name, display_prefix, key_hash, scopes)
            VALUES (${workspace!.id}, ${name}, 'wsk_test', ${crypto.randomBytes(32)}, ${"{USAGE_EXPORT_API}"}) RETURNING id`
          keys.push(key!.id)
        }
        return yield* answers(workspace!.id, keys)
      }).pipe(Effect.provide(Layer.mergeAll(UsageLedger.layer, UsageOverview.layer).pipe(Layer.provideMerge(Database))), Effect.scoped)

      const inMemory = yield* Effect.gen(function*() {
        const workspace = yield* Effect.flatMap(Workspaces, (w) => w.create("differential", {}))
        const keys: Array<string> = []
        for (const name of ["first", "second", "third"]) {
          keys.push((yield* Effect.flatMap(ApiKeys, (k) => k.create(workspace.id, name, ["USAGE_EXPORT_API"]))).record.id)
        }
        return yield* answers(workspace.id, keys)
      }).pipe(
        Effect.provide(UsageOverview.memory.pipe(Layer.provideMerge(UsageLedger.memory), Layer.provideMerge(ApiKeys.memory), Layer.provideMerge(Workspaces.memory)))
      )

      expect([...inMemory.keys()]).toEqual([...onPostgres.keys()])
      let rows = 0
      for (const [name, answer] of onPostgres) {
        expect(inMemory.get(name), name).toEqual(answer)
        const total = (answer as { total?: number }).total
        if (total !== undefined) rows += total
      }
      // The data reaches every layout.
      expect(rows).toBeGreaterThan(5_000)
    }), 180_000)
})

