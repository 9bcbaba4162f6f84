import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Logger, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { runMigrations } from "../../src/services/Migrations"
import { type ApiRequestRecord, UsageRecorder } from "../../src/services/UsageRecorder"
import { freshDatabaseUrl } from "../support/database"

const record = (i: number, workspaceId: string): ApiRequestRecord => ({
  workspaceId,
  keyId: "00000000-0000-0000-0000-000000000001",
  endpoint: "chat_completions",
  provider: "provider_a",
  region: "eu",
  model: "chatgen-4o",
  status: 200,
  outcome: "completed",
  stream: false,
  inputTokens: i,
  outputTokens: 2 * i,
  costUsd: 0.001,
  latencyMs: 12.4,
  requestId: `req_${i}`,
  createdAt: new Date()
})

/** A database whose api_requests table can be taken away and given back, as in an outage. */
const setup = async () => {
  const url = await freshDatabaseUrl()
  const Pg = PgClient.layer({ url: Redacted.make(url), maxConnections: 4 })
  const workspaceId = await Effect.runPromise(
    Effect.gen(function*() {
      yield* runMigrations()
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ id: string }>`INSERT INTO workspaces (name) VALUES ('w') RETURNING id`
      return row!.id
    }).pipe(Effect.provide(Pg), Effect.scoped)
  )
  return { Pg, workspaceId }
}

const statement = (text: string) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
const count = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM api_requests`)

describe("UsageRecorder against a real PostgreSQL", () => {
  it("keeps records through a database outage and writes them once it is back", async () => {
    const { Pg, workspaceId } = await setup()
    await Effect.runPromise(
      Effect.gen(function*() {
        const recorder = yield* UsageRecorder
        yield* statement("ALTER TABLE api_requests RENAME TO api_requests_away")
        for (let i = 1; i <= 30; i++) yield* recorder.record(record(i, workspaceId))
        yield* Effect.sleep("1500 millis")
        yield* statement("ALTER TABLE api_requests_away RENAME TO api_requests")
        yield* Effect.sleep("1500 millis")
        const [written] = yield* count
        expect(written!.n).toBe(30)
        const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ request_id: string; output_tokens: number }>`SELECT request_id, output_tokens FROM api_requests ORDER BY id`)
        expect(rows.map((r) => r.request_id)).toEqual(Array.from({ length: 30 }, (_, i) => `req_${i + 1}`))
        expect(rows[4]!.output_tokens).toBe(10)
      }).pipe(
        Effect.provide(UsageRecorder.layerWith({ capacity: 1_000, batchSize: 7, flushEvery: "100 millis" }).pipe(Layer.provideMerge(Pg))),
        Effect.scoped
      )
    )
  }, 30_000)

  it("drops the oldest records beyond its capacity, saying so in the log, and flushes the rest on shutdown", async () => {
    const { Pg, workspaceId } = await setup()
    const logged: Array<string> = []
    const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logged.push(JSON.stringify(message))))
    await Effect.runPromise(
      Effect.gen(function*() {
        yield* statement("ALTER TABLE api_requests RENAME TO api_requests_away")
        yield* Effect.scoped(
          Effect.gen(function*() {
            const recorder = yield* UsageRecorder
            for (let i = 1; i <= 8; i++) yield* recorder.record(record(i, workspaceId))
            yield* Effect.sleep("300 millis")
            yield* statement("ALTER TABLE api_requests_away RENAME TO api_requests")
            // Closing the scope is the shutdown: what is left is written then.
          }).pipe(Effect.provide(UsageRecorder.layerWith({ capacity: 5, batchSize: 100, flushEvery: "10 seconds" })))
        )
        const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ request_id: string }>`SELECT request_id FROM api_requests ORDER BY id`)
        expect(rows.map((r) => r.request_id)).toEqual(["req_4", "req_5", "req_6", "req_7", "req_8"])
      }).pipe(Effect.provide(Pg), Effect.provide(capture), Effect.scoped)
    )
    expect(logged.some((line) => line.includes("oldest records dropped"))).toBe(true)
  }, 30_000)
})
