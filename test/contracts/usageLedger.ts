/**
 * The usage ledger's contract, written once and run against every backing (UsageLedger.memory in
 * test/services/usage/usageLedger.memory.test.ts, UsageLedger.layer on PostgreSQL in
 * test/integration/usageLedger.pg.test.ts), so that the in-memory ledger cannot drift from the real one.
 *
 * The export data set is the one of test/integration/exportQueries.test.ts, stored through the ledger
 * itself; its expected cells are computed by hand there (see the comments). Zone Europe/Berlin, range
 * [2026-03-28T00:00+01:00, 2026-03-30T12:00+02:00): three local days, the middle one the 23-hour
 * spring-forward day. Each test works in workspaces of its own, so the suite shares one ledger.
 * UsageOverview (the console's charts) reads what the ledger stores, so its cases are here too.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Chunk, Context, Effect, type Layer, Schema, Stream } from "effect"
import { DateTime } from "luxon"
import { UsageEvent } from "../../src/domain/usageEvent"
import { encodeHeader } from "../../src/domain/csv"
import { EXPORT_KINDS, type ExportKind, exportLayouts } from "../../src/domain/exportLayouts"
import type { ExportQueryInput } from "../../src/services/usage/3-UsageLedger/exportQueries"
import { encodeValueRows } from "../../src/services/exports/ExportService/valueRows"
import { type ApiRequestRow, UsageLedger } from "../../src/services/usage/3-UsageLedger/index"
import { UsageOverview } from "../../src/services/usage/4-UsageOverview/index"
import { message, workflowRun } from "../support/usage"
import { requestRecord } from "../support/requestRecord"

/** What a backing gives the suite besides the ledger: workspaces and API keys (with a name) it may refer to. */
export class LedgerFixtures extends Context.Tag("LedgerFixtures")<LedgerFixtures, {
  readonly newWorkspace: Effect.Effect<string>
  readonly newKey: (workspaceId: string, name: string) => Effect.Effect<string>
}>() {}

const decodeEvents = Schema.decodeUnknown(Schema.Array(UsageEvent))

const ingest = (workspaceId: string, wire: ReadonlyArray<unknown>) =>
  Effect.flatMap(Effect.orDie(decodeEvents(wire)), (events) => Effect.flatMap(UsageLedger, (ledger) => ledger.ingest(workspaceId, events)))

export const requestRow = (workspaceId: string, fields: Partial<ApiRequestRow> = {}): ApiRequestRow =>
  ({ ...requestRecord({ workspaceId, createdAt: new Date("2026-03-28T12:00:00Z") }), ...fields })

const BERLIN: Omit<ExportQueryInput, "workspaceId"> = {
  from: new Date("2026-03-27T23:00:00Z"), // 2026-03-28T00:00:00+01:00
  to: new Date("2026-03-30T10:00:00Z"), // 2026-03-30T12:00:00+02:00
  zone: "Europe/Berlin",
  catalog: [
    { model: "chatgen-4o", provider: "provider_a", inputUsdPerMillion: 2.5, outputUsdPerMillion: 10 },
    { model: "codemodel-2501", provider: "provider_c", inputUsdPerMillion: 0.3, outputUsdPerMillion: 0.9 }
  ]
}

/** The export's data lines (CSV, as the export file has them) and its count. */
const exportLines = (kind: ExportKind, input: ExportQueryInput, maxRows = 1_000_000) =>
  Effect.scoped(
    Effect.gen(function*() {
      const ledger = yield* UsageLedger
      const read = yield* ledger.readExport(kind, input, { maxRows })
      const batches = Chunk.toReadonlyArray(yield* Stream.runCollect(read.rows))
      const csv = batches.map((rows) => encodeValueRows(rows, exportLayouts[kind])).join("")
      return { total: read.total, lines: csv.split("\r\n").slice(0, -1) }
    })
  )

/** The same read as CSV lines made by the ledger (readExportCsv): on PostgreSQL, encoded by the database. */
const exportCsvLines = (kind: ExportKind, input: ExportQueryInput, maxRows = 1_000_000) =>
  Effect.scoped(
    Effect.gen(function*() {
      const ledger = yield* UsageLedger
      const read = yield* ledger.readExportCsv(kind, input, { maxRows })
      const batches = Chunk.toReadonlyArray(yield* Stream.runCollect(read.lines))
      return { total: read.total, lines: batches.flat() }
    })
  )

const ann = { id: "u1", email: "ann@example.com", name: "Ann" }
const bob = { id: "u2", name: "=Bob" }
const helper = { id: "a1", name: "Helper, the" }
const launch = { id: "p1", name: "Launch" }

/** The data set of exportQueries.test.ts, as events and request rows. */
const seed = (workspaceId: string, otherWorkspaceId: string) =>
  Effect.gen(function*() {
    const result = yield* ingest(workspaceId, [
      // 2026-03-27 23:30 local: before the range
      message("m1", "2026-03-27T22:30:00Z", { user: ann, inputTokens: 1, outputTokens: 1, feature: "chat", conversationId: "c0" }),
      // 03-28 00:15+01:00
      message("m2", "2026-03-27T23:15:00Z", { user: ann, assistant: helper, project: launch, inputTokens: 100, outputTokens: 200, feature: "chat", conversationId: "c1" }),
      // 03-28 11:05+01:00
      message("m3", "2026-03-28T10:05:00Z", { user: ann, assistant: helper, model: "assistantmodel-x", inputTokens: 50, outputTokens: 60, feature: "search", conversationId: "c1" }),
      // 03-28 23:59+01:00
      message("m4", "2026-03-28T22:59:00Z", { user: bob, project: launch, inputTokens: 10, outputTokens: 20 }),
      // 03-29 00:00+01:00 (the DST day)
      message("m5", "2026-03-28T23:00:00Z", { user: ann, assistant: helper, project: launch, inputTokens: 1000, outputTokens: 2000, feature: "chat", conversationId: "c2" }),
      // 03-29 03:30+02:00
      message("m6", "2026-03-29T01:30:00Z", { user: ann, inputTokens: 1, outputTokens: 1, feature: "chat", conversationId: "c3" }),
      // 03-30 11:59+02:00
      message("m7", "2026-03-30T09:59:00Z", { user: bob, assistant: helper, project: launch, model: "assistantmodel-x", inputTokens: 5, outputTokens: 5, feature: "code", conversationId: "c4" }),
      // 03-30 12:00+02:00: the range's end is exclusive
      message("m8", "2026-03-30T10:00:00Z", { user: { id: "u3", email: "out@example.com", name: "Outside" }, inputTokens: 9, outputTokens: 9 }),
      workflowRun("r1", "2026-03-28T08:00:00Z", 2_000, { user: ann, project: launch }),
      workflowRun("r2", "2026-03-28T09:00:00Z", 4_000, { user: bob, status: "failed" }),
      workflowRun("r3", "2026-03-28T10:00:00Z", 10_000, { project: launch }),
      // 03-30 00:30+02:00
      workflowRun("r4", "2026-03-29T22:30:00Z", 1_000, { user: bob, project: launch })
    ])
    expect(result).toEqual({ accepted: 12, duplicates: 0 })
    // Same time, another workspace: never exported.
    yield* ingest(otherWorkspaceId, [message("m2", "2026-03-28T10:00:00Z", { user: { id: "u1", email: "other@example.com", name: "Other" }, inputTokens: 7, outputTokens: 7 })])
    const ledger = yield* UsageLedger
    yield* ledger.insertRequests([
      requestRow(workspaceId, { createdAt: new Date("2026-03-28T12:00:00Z"), inputTokens: 10, outputTokens: 20, latencyMs: 100, costUsd: 0.0001 }),
      requestRow(workspaceId, { createdAt: new Date("2026-03-28T13:00:00Z"), status: 429, inputTokens: 0, outputTokens: 0, latencyMs: 50, costUsd: 0 }),
      requestRow(workspaceId, {
        createdAt: new Date("2026-03-29T12:00:00Z"), inputTokens: 7, outputTokens: 8, latencyMs: 301, costUsd: 0.5,
        endpoint: "messages", provider: "provider_b", region: "us", model: "assistantmodel-x", deployment: "provider_b-us"
      }),
      requestRow(workspaceId, {
        createdAt: new Date("2026-03-30T10:00:00Z"), inputTokens: 1, outputTokens: 1, latencyMs: 1, costUsd: 1,
        endpoint: "messages", provider: "provider_b", region: "us", model: "assistantmodel-x", deployment: "provider_b-us"
      })
    ])
  })

const DAY_28 = "2026-03-28T00:00:00+01:00,2026-03-29T00:00:00+01:00"
// The spring-forward day lasts 23 hours: it ends at +02:00.
const DAY_29 = "2026-03-29T00:00:00+01:00,2026-03-30T00:00:00+02:00"
// Clipped to the range's end.
const DAY_30 = "2026-03-30T00:00:00+02:00,2026-03-30T12:00:00+02:00"

const expectedLines: { readonly [K in ExportKind]: ReadonlyArray<string> } = {
  users: [
    // m2 (hour 0) + m3 (hour 11): 2 messages, conversation c1, a1, p1, 150/260 tokens
    `${DAY_28},u1,ann@example.com,Ann,2,1,1,1,chat;search,assistantmodel-x;chatgen-4o,2,0,11,150,260`,
    // m4 at 23:59, no conversation, no assistant, no feature; the name is neutralised
    `${DAY_28},u2,,'=Bob,1,0,0,1,,chatgen-4o,1,23,23,10,20`,
    // m5 00:00+01:00 and m6 03:30+02:00
    `${DAY_29},u1,ann@example.com,Ann,2,2,1,1,chat,chatgen-4o,2,0,3,1001,2001`,
    `${DAY_30},u2,,'=Bob,1,1,1,1,code,assistantmodel-x,1,11,11,5,5`
  ],
  assistants: [
    `${DAY_28},a1,"Helper, the",2,1,1,150,260`,
    `${DAY_29},a1,"Helper, the",1,1,1,1000,2000`,
    `${DAY_30},a1,"Helper, the",1,1,1,5,5`
  ],
  workflows: [
    // durations 2 s, 4 s, 10 s: avg 5333.3 → 5333; p95 = 4000 + 0.9 × 6000 = 9400
    `${DAY_28},w1,Nightly,3,2,1,0.6667,2000,5333,9400,10000,2`,
    `${DAY_30},w1,Nightly,1,1,0,1.0000,1000,1000,1000,1000,1`
  ],
  projects: [
    // m2: 100 × 2.5 + 200 × 10 = 2250; m4: 10 × 2.5 + 20 × 10 = 225 → 0.002475 USD
    `${DAY_28},p1,Launch,2,2,2,110,220,0.002475`,
    // m5: 1000 × 2.5 + 2000 × 10 = 22500 → 0.0225
    `${DAY_29},p1,Launch,1,0,1,1000,2000,0.022500`,
    // m7 uses a model without a catalog price; r4 has the same user
    `${DAY_30},p1,Launch,1,1,1,5,5,0.000000`
  ],
  models: [
    `${DAY_28},api,chatgen-4o,provider_a,eu,2,1,10,20,0.000100,75,false,0,provider_a-eu`,
    `${DAY_28},platform,assistantmodel-x,,,1,0,50,60,0.000000,,,,`,
    `${DAY_28},platform,chatgen-4o,provider_a,,2,0,110,220,0.002475,,,,`,
    `${DAY_29},api,assistantmodel-x,provider_b,us,1,0,7,8,0.500000,301,false,0,provider_b-us`,
    // 1001 × 2.5 + 2001 × 10 = 22512.5 → 0.0225125 → 0.022513
    `${DAY_29},platform,chatgen-4o,provider_a,,2,0,1001,2001,0.022513,,,,`,
    `${DAY_30},platform,assistantmodel-x,,,1,0,5,5,0.000000,,,,`
  ]
}

/** Defines the contract's cases for one backing; `backing` gives UsageLedger, UsageOverview over it, and LedgerFixtures. */
export const usageLedgerContract = <E>(name: string, backing: Layer.Layer<UsageLedger | UsageOverview | LedgerFixtures, E>) =>
  layer(backing, { timeout: 180_000, excludeTestServices: true })(`UsageLedger contract (${name})`, (it) => {
    const newWorkspace = Effect.flatMap(LedgerFixtures, (f) => f.newWorkspace)

    describe("ingestion", () => {
      it.effect("stores a batch sent twice once, and says which events were duplicates", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          const batch = [
            message("e1", "2026-03-28T10:00:00Z"),
            message("e2", "2026-03-28T11:00:00Z"),
            workflowRun("e3", "2026-03-28T12:00:00Z", 1_000)
          ]
          expect(yield* ingest(workspace, batch)).toEqual({ accepted: 3, duplicates: 0 })
          expect(yield* ingest(workspace, batch)).toEqual({ accepted: 0, duplicates: 3 })
          // A batch mixing a known id and a new one: only the new one is stored.
          expect(yield* ingest(workspace, [message("e2", "2026-03-28T11:00:00Z"), message("e4", "2026-03-28T13:00:00Z")]))
            .toEqual({ accepted: 1, duplicates: 1 })
          const users = yield* exportLines("users", { ...BERLIN, workspaceId: workspace })
          expect(users.total).toBe(1)
          expect(users.lines).toEqual([`${DAY_28},u1,ann@example.com,Ann,3,0,0,0,,chatgen-4o,3,11,14,30,60`])
          expect((yield* exportLines("workflows", { ...BERLIN, workspaceId: workspace })).total).toBe(1)
        }))

      it.effect("keeps event ids per workspace: the same id in another workspace is another event", () =>
        Effect.gen(function*() {
          const first = yield* newWorkspace
          const second = yield* newWorkspace
          expect(yield* ingest(first, [message("same", "2026-03-28T10:00:00Z")])).toEqual({ accepted: 1, duplicates: 0 })
          expect(yield* ingest(second, [message("same", "2026-03-28T10:00:00Z")])).toEqual({ accepted: 1, duplicates: 0 })
        }))

      it.effect("does not let a late event put an old email or name back, and keeps fields an event does not carry", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          yield* ingest(workspace, [
            message("new", "2026-03-28T12:00:00Z", { user: { id: "u1", email: "new@example.com", name: "New" }, assistant: { id: "a1", name: "Newer name" } })
          ])
          // An older event, arriving late, with older values.
          yield* ingest(workspace, [
            message("old", "2026-03-28T09:00:00Z", { user: { id: "u1", email: "old@example.com", name: "Old" }, assistant: { id: "a1", name: "Old name" } })
          ])
          // A newer event without email: the name moves on, the email stays.
          yield* ingest(workspace, [message("newest", "2026-03-28T13:00:00Z", { user: { id: "u1", name: "Newest" } })])
          const input = { ...BERLIN, workspaceId: workspace }
          expect((yield* exportLines("users", input)).lines).toEqual([
            `${DAY_28},u1,new@example.com,Newest,3,0,1,0,,chatgen-4o,3,10,14,30,60`
          ])
          expect((yield* exportLines("assistants", input)).lines).toEqual([`${DAY_28},a1,Newer name,2,1,0,20,40`])
        }))

      it.effect("within one batch takes each field from the newest event that carries it, whatever the order", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          yield* ingest(workspace, [
            message("b", "2026-03-28T12:00:00Z", { user: { id: "u1", email: "later@example.com" } }),
            message("a", "2026-03-28T10:00:00Z", { user: { id: "u1", email: "earlier@example.com", name: "Named" } })
          ])
          expect((yield* exportLines("users", { ...BERLIN, workspaceId: workspace })).lines).toEqual([
            `${DAY_28},u1,later@example.com,Named,2,0,0,0,,chatgen-4o,2,11,13,20,40`
          ])
        }))
    })

    describe("API request rows", () => {
      const apiRows = (workspaceId: string) =>
        Effect.map(exportLines("models", { ...BERLIN, workspaceId }), ({ lines }) => lines.filter((line) => line.includes(",api,")))

      it.effect("stores a record id once, however often it is written", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          const ledger = yield* UsageLedger
          const [a, b, c] = [requestRow(workspace), requestRow(workspace), requestRow(workspace)]
          yield* ledger.insertRequests([a, b])
          yield* ledger.insertRequests([a, b, c])
          yield* ledger.insertRequests([c])
          // 3 requests, 3 + 3 + 3 input tokens, latency 12.4 kept as 12
          expect(yield* apiRows(workspace)).toEqual([`${DAY_28},api,chatgen-4o,provider_a,eu,3,0,9,12,0.003000,12,false,0,provider_a-eu`])
        }))

      it.effect("keeps requests sent with the workspace's own key apart from those sent with the service's", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          const ledger = yield* UsageLedger
          yield* ledger.insertRequests([requestRow(workspace, { byok: true }), requestRow(workspace), requestRow(workspace, { byok: true })])
          expect(yield* apiRows(workspace)).toEqual([
            `${DAY_28},api,chatgen-4o,provider_a,eu,1,0,3,4,0.001000,12,false,0,provider_a-eu`,
            `${DAY_28},api,chatgen-4o,provider_a,eu,2,0,6,8,0.002000,12,true,0,provider_a-eu`
          ])
          expect((yield* exportLines("models", { ...BERLIN, workspaceId: workspace })).total).toBe(2)
        }))

      it.effect("counts the requests whose usage was bounded (clamped) in the models export's last column", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          const ledger = yield* UsageLedger
          yield* ledger.insertRequests([
            requestRow(workspace, { clamped: true, outputTokens: 16 }),
            requestRow(workspace),
            requestRow(workspace, { clamped: true, inputTokens: 0 }),
            requestRow(workspace, { byok: true })
          ])
          expect(yield* apiRows(workspace)).toEqual([
            `${DAY_28},api,chatgen-4o,provider_a,eu,3,0,6,24,0.003000,12,false,2,provider_a-eu`,
            `${DAY_28},api,chatgen-4o,provider_a,eu,1,0,3,4,0.001000,12,true,0,provider_a-eu`
          ])
        }))

      it.effect("names the serving deployment in the models export's last column: one row per deployment, empty for older records", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          const ledger = yield* UsageLedger
          const first = requestRow(workspace, { deployment: "eu-primary" })
          yield* ledger.insertRequests([
            first,
            requestRow(workspace, { deployment: "eu-fallback", status: 429 }),
            // Recorded before deployments were.
            requestRow(workspace, { deployment: undefined }),
            requestRow(workspace, { deployment: "eu-primary", outputTokens: 6 }),
            requestRow(workspace, { deployment: "eu-fallback", byok: true }),
            // A name the CSV must quote and neutralise, as any text cell.
            requestRow(workspace, { deployment: "=eu,odd" })
          ])
          // The same record id again, with another deployment: still stored once, as first written.
          yield* ledger.insertRequests([{ ...first, deployment: "eu-elsewhere" }])
          const expected = [
            `${DAY_28},api,chatgen-4o,provider_a,eu,1,0,3,4,0.001000,12,false,0,"'=eu,odd"`,
            `${DAY_28},api,chatgen-4o,provider_a,eu,1,1,3,4,0.001000,12,false,0,eu-fallback`,
            `${DAY_28},api,chatgen-4o,provider_a,eu,2,0,6,10,0.002000,12,false,0,eu-primary`,
            `${DAY_28},api,chatgen-4o,provider_a,eu,1,0,3,4,0.001000,12,false,0,`,
            `${DAY_28},api,chatgen-4o,provider_a,eu,1,0,3,4,0.001000,12,true,0,eu-fallback`
          ]
          expect(yield* apiRows(workspace)).toEqual(expected)
          const input = { ...BERLIN, workspaceId: workspace }
          expect(yield* exportCsvLines("models", input)).toEqual({ total: expected.length, lines: expected })
          expect(exportLayouts.models.columns.at(-1)?.name).toBe("deployment")
        }))

      it.effect("refuses a batch holding a value out of a column's range, whole, naming the SQLSTATE", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          const ledger = yield* UsageLedger
          const good = requestRow(workspace)
          for (const [bad, code] of [
            [requestRow(workspace, { outputTokens: 1e10 }), /^22003/],
            [requestRow(workspace, { inputTokens: 5.5 }), /^22P02/],
            [requestRow(workspace, { status: 700 }), /^23514/],
            [requestRow(workspace, { costUsd: -1 }), /^23514/],
            [requestRow(workspace, { keyId: "not-a-uuid" }), /^22P02/]
          ] as const) {
            const refused = yield* Effect.flip(ledger.insertRequests([good, bad]))
            expect(refused._tag).toBe("RequestsRefused")
            expect(refused._tag === "RequestsRefused" ? refused.reason : "").toMatch(code)
          }
          expect(yield* apiRows(workspace)).toEqual([])
          yield* ledger.insertRequests([good])
          expect(yield* apiRows(workspace)).toHaveLength(1)
        }))

      it.effect("keeps a dead letter once per record id", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          const ledger = yield* UsageLedger
          const row = requestRow(workspace, { outputTokens: 1e10 })
          yield* ledger.deadLetter(row, JSON.stringify(row), "22003: out of range")
          yield* ledger.deadLetter(row, JSON.stringify(row), "22003: out of range")
          // A dead letter is not a request of the ledger.
          expect(yield* apiRows(workspace)).toEqual([])
        }))
    })

    describe("export reads", () => {
      for (const kind of EXPORT_KINDS) {
        it.effect(`${kind}: the rows of the layout per local day of Europe/Berlin, with their count`, () =>
          Effect.gen(function*() {
            const workspace = yield* newWorkspace
            yield* seed(workspace, yield* newWorkspace)
            const read = yield* exportLines(kind, { ...BERLIN, workspaceId: workspace })
            expect(read.lines).toEqual(expectedLines[kind])
            expect(read.total).toBe(expectedLines[kind].length)
            // The same lines when the ledger encodes them.
            expect(yield* exportCsvLines(kind, { ...BERLIN, workspaceId: workspace })).toEqual(read)
            expect(encodeHeader(exportLayouts[kind]).split(",")).toHaveLength(exportLayouts[kind].columns.length)
          }))
      }

      it.effect("reads at one point in time: what is stored while an export is open is not in it", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          yield* seed(workspace, yield* newWorkspace)
          const input = { ...BERLIN, workspaceId: workspace }
          const lines = yield* Effect.scoped(
            Effect.gen(function*() {
              const ledger = yield* UsageLedger
              const read = yield* ledger.readExport("models", input, { maxRows: 1_000_000 })
              // Stored after the read opened: a new day of platform messages and of API requests.
              yield* ingest(workspace, [message("late", "2026-03-30T08:00:00Z", { user: { id: "u9" } })])
              yield* ledger.insertRequests([requestRow(workspace, { createdAt: new Date("2026-03-30T08:00:00Z") })])
              const batches = Chunk.toReadonlyArray(yield* Stream.runCollect(read.rows))
              expect(batches.reduce((n, rows) => n + rows.length, 0)).toBe(read.total)
              return batches.flatMap((rows) => encodeValueRows(rows, exportLayouts.models).split("\r\n").slice(0, -1))
            })
          )
          expect(lines).toEqual(expectedLines.models)
          // A read opened now sees them.
          expect((yield* exportLines("models", input)).total).toBe(expectedLines.models.length + 2)
        }))

      it.effect("counts exactly up to the row limit; past it, the limit + 1 and no row read, for every layout", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          yield* seed(workspace, yield* newWorkspace)
          const input = { ...BERLIN, workspaceId: workspace }
          for (const kind of EXPORT_KINDS) {
            const rows = expectedLines[kind].length
            // At the limit: the rows, all of them.
            expect(yield* exportLines(kind, input, rows), kind).toEqual({ total: rows, lines: expectedLines[kind] })
            // One over it: the limit + 1, nothing read.
            expect(yield* exportLines(kind, input, rows - 1), kind).toEqual({ total: rows, lines: [] })
            expect(yield* exportLines(kind, input, 1), kind).toEqual({ total: 2, lines: [] })
            expect(yield* exportCsvLines(kind, input, rows), kind).toEqual({ total: rows, lines: expectedLines[kind] })
            expect(yield* exportCsvLines(kind, input, rows - 1), kind).toEqual({ total: rows, lines: [] })
          }
        }))

      it.effect("an empty range gives no rows and a zero count, for every layout", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          yield* seed(workspace, yield* newWorkspace)
          const empty = { ...BERLIN, workspaceId: workspace, from: new Date("2025-01-01T00:00:00Z"), to: new Date("2025-02-01T00:00:00Z") }
          for (const kind of EXPORT_KINDS) {
            expect(yield* exportLines(kind, empty)).toEqual({ total: 0, lines: [] })
          }
          // A workspace with nothing at all.
          expect(yield* exportLines("models", { ...BERLIN, workspaceId: yield* newWorkspace })).toEqual({ total: 0, lines: [] })
        }))

      it.effect("a huge range costs only the days with data; UTC days are cut at UTC midnight", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          yield* seed(workspace, yield* newWorkspace)
          const wide = yield* exportLines("users", { ...BERLIN, workspaceId: workspace, from: new Date("1900-01-01T00:00:00Z"), to: new Date("2200-01-01T00:00:00Z") })
          // m1 (03-27) and m8 (u3 on 03-30) are now inside: 6 user-days
          expect(wide.total).toBe(6)
          expect(wide.lines[0]).toMatch(/^2026-03-27T00:00:00\+01:00,2026-03-28T00:00:00\+01:00,u1,/)
          const utc = yield* exportLines("assistants", { ...BERLIN, workspaceId: workspace, zone: "UTC" })
          // m2 (23:15Z on 03-27) falls on 03-27 in UTC, clipped to the range start 23:00Z
          expect(utc.lines[0]).toBe("2026-03-27T23:00:00+00:00,2026-03-28T00:00:00+00:00,a1,\"Helper, the\",1,1,1,100,200")
        }))

      it.effect("a fall-back day of America/New_York lasts 25 hours; Asia/Kolkata days start at 18:30 UTC", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          yield* ingest(workspace, [
            // 2026-11-01 00:30-04:00 and 23:30-05:00: the same local day
            message("ny1", "2026-11-01T04:30:00Z"),
            message("ny2", "2026-11-02T04:30:00Z")
          ])
          const range = { ...BERLIN, workspaceId: workspace, from: new Date("2026-10-31T00:00:00Z"), to: new Date("2026-11-05T00:00:00Z") }
          expect((yield* exportLines("users", { ...range, zone: "America/New_York" })).lines).toEqual([
            "2026-11-01T00:00:00-04:00,2026-11-02T00:00:00-05:00,u1,ann@example.com,Ann,2,0,0,0,,chatgen-4o,2,0,23,20,40"
          ])
          // 10:00 and 10:00 local on two days in Kolkata (+05:30)
          expect((yield* exportLines("assistants", { ...range, zone: "Asia/Kolkata" })).lines).toEqual([])
          expect((yield* exportLines("users", { ...range, zone: "Asia/Kolkata" })).lines).toEqual([
            "2026-11-01T00:00:00+05:30,2026-11-02T00:00:00+05:30,u1,ann@example.com,Ann,1,0,0,0,,chatgen-4o,1,10,10,10,20",
            "2026-11-02T00:00:00+05:30,2026-11-03T00:00:00+05:30,u1,ann@example.com,Ann,1,0,0,0,,chatgen-4o,1,10,10,10,20"
          ])
        }))
    })

    describe("export runs", () => {
      it.effect("lists a workspace's runs whose links live, newest link first, up to the limit, with who ran them", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          const other = yield* newWorkspace
          const keyId = yield* Effect.flatMap(LedgerFixtures, (f) => f.newKey(workspace, "reports"))
          const ledger = yield* UsageLedger
          const run = (filePath: string, linkExpiresAt: string, createdBy: { label: string } | { keyId: string }, workspaceId = workspace) =>
            ledger.recordExportRun({
              workspaceId,
              dataType: "users",
              rangeFrom: "2026-03-28T00:00:00+01:00",
              rangeTo: "2026-03-30T12:00:00+02:00",
              timezone: "Europe/Berlin",
              recordCount: 4,
              filePath,
              createdBy,
              linkExpiresAt: new Date(linkExpiresAt)
            })
          yield* run("expired.csv", "2000-01-01T00:00:00Z", { label: "operator" })
          yield* run("soon.csv", "2100-01-01T00:00:00Z", { label: "ann@example.com" })
          yield* run("later.csv", "2100-06-01T00:00:00Z", { keyId })
          yield* run("latest.csv", "2100-12-01T00:00:00Z", { label: "operator" })
          yield* run("elsewhere.csv", "2100-12-01T00:00:00Z", { label: "operator" }, other)
          const listed = yield* ledger.recentExportRuns(workspace, 2)
          expect(listed.map((r) => r.filePath)).toEqual(["latest.csv", "later.csv"])
          expect(listed[1]).toMatchObject({
            workspaceId: workspace,
            dataType: "users",
            rangeFrom: "2026-03-28T00:00:00+01:00",
            rangeTo: "2026-03-30T12:00:00+02:00",
            timezone: "Europe/Berlin",
            recordCount: 4,
            createdBy: { keyId },
            linkExpiresAt: new Date("2100-06-01T00:00:00Z")
          })
          expect(typeof listed[0]!.id).toBe("string")
          expect(listed[0]!.createdAt).toBeInstanceOf(Date)
          expect((yield* ledger.recentExportRuns(workspace, 10)).map((r) => [r.filePath, r.createdBy])).toEqual([
            ["latest.csv", { label: "operator" }],
            ["later.csv", { keyId }],
            ["soon.csv", { label: "ann@example.com" }]
          ])
        }))
    })

    describe("UsageOverview over the ledger", () => {
      const range = { from: "2026-03-28", to: "2026-03-31", timezone: "Europe/Berlin" }

      it.effect("sums forwarded requests per local day by model, family and API key (with its name)", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          const fixtures = yield* LedgerFixtures
          const first = yield* fixtures.newKey(workspace, "first key")
          const second = yield* fixtures.newKey(workspace, "second key")
          const ledger = yield* UsageLedger
          const at = (iso: string) => new Date(iso)
          yield* ledger.insertRequests([
            // 03-27 23:59+01:00: before the range
            requestRow(workspace, { createdAt: at("2026-03-27T22:59:00Z"), keyId: first }),
            // 03-28 23:59+01:00
            requestRow(workspace, { createdAt: at("2026-03-28T22:59:00Z"), keyId: first, inputTokens: 10, outputTokens: 20, costUsd: 0.0001 }),
            // 03-29 00:00+01:00, the spring-forward day
            // … sent with the workspace's own provider key
            requestRow(workspace, { createdAt: at("2026-03-28T23:00:00Z"), keyId: second, inputTokens: 1, outputTokens: 2, costUsd: 0.25, byok: true }),
            // 03-30 00:30+02:00; the cost is kept to 8 decimals (0.12345679), shown to 6
            requestRow(workspace, {
              createdAt: at("2026-03-29T22:30:00Z"), keyId: first, inputTokens: 7, outputTokens: 8, costUsd: 0.123456789,
              endpoint: "messages", provider: "provider_b", model: "assistantmodel-x"
            }),
            // 03-30 23:59+02:00
            requestRow(workspace, { createdAt: at("2026-03-30T21:59:00Z"), keyId: first, inputTokens: 5, outputTokens: 5, costUsd: 0.002 }),
            // 03-31 00:00+02:00: `to` is exclusive
            requestRow(workspace, { createdAt: at("2026-03-30T22:00:00Z"), keyId: first })
          ])
          const overview = yield* UsageOverview
          const day = (d: string, group: string, requests: number, inputTokens: number, outputTokens: number, costUsd: number) =>
            ({ day: d, group, requests, inputTokens, outputTokens, costUsd })
          expect(yield* overview.usage(workspace, range, "model")).toEqual([
            day("2026-03-28", "chatgen-4o", 1, 10, 20, 0.0001),
            day("2026-03-29", "chatgen-4o", 1, 1, 2, 0.25),
            day("2026-03-30", "assistantmodel-x", 1, 7, 8, 0.123457),
            day("2026-03-30", "chatgen-4o", 1, 5, 5, 0.002)
          ])
          expect(yield* overview.usage(workspace, range, "family")).toEqual([
            day("2026-03-28", "chat_completions", 1, 10, 20, 0.0001),
            day("2026-03-29", "chat_completions", 1, 1, 2, 0.25),
            day("2026-03-30", "chat_completions", 1, 5, 5, 0.002),
            day("2026-03-30", "messages", 1, 7, 8, 0.123457)
          ])
          expect(yield* overview.usage(workspace, range, "apiKey")).toEqual([
            { ...day("2026-03-28", first, 1, 10, 20, 0.0001), label: "first key" },
            { ...day("2026-03-29", second, 1, 1, 2, 0.25), label: "second key" },
            { ...day("2026-03-30", first, 2, 12, 13, 0.125457), label: "first key" }
          ])
          expect(yield* overview.usage(workspace, range, "byok")).toEqual([
            { ...day("2026-03-28", "managed", 1, 10, 20, 0.0001), label: "the service's keys" },
            { ...day("2026-03-29", "byok", 1, 1, 2, 0.25), label: "the workspace's own provider keys" },
            { ...day("2026-03-30", "managed", 2, 12, 13, 0.125457), label: "the service's keys" }
          ])
          // Kolkata's days start at 18:30 UTC: 03-28 22:59Z and 23:00Z are on the same local day.
          // Kolkata's days start at 18:30 UTC: the range starts on 03-27 at 18:30Z, so the first request is in
          // (03-28 04:29), 03-28 22:59Z and 23:00Z are on one local day, and 03-30 21:59Z is after the range.
          expect(yield* overview.usage(workspace, { ...range, timezone: "Asia/Kolkata" }, "family")).toEqual([
            day("2026-03-28", "chat_completions", 1, 3, 4, 0.001),
            day("2026-03-29", "chat_completions", 2, 11, 22, 0.2501),
            day("2026-03-30", "messages", 1, 7, 8, 0.123457)
          ])
        }))

      it.effect("counts platform messages, tokens and distinct active users per local day", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          const u = (id: string) => ({ user: { id } })
          yield* ingest(workspace, [
            message("a", "2026-03-27T22:59:00Z", u("u1")), // 03-27: before
            message("b", "2026-03-28T10:00:00Z", u("u1")),
            message("c", "2026-03-28T22:59:00Z", u("u2")),
            message("d", "2026-03-28T23:00:00Z", u("u1")), // 03-29 00:00+01:00
            message("e", "2026-03-29T21:59:00Z", u("u1")), // 03-29 23:59+02:00
            message("f", "2026-03-29T22:00:00Z", u("u3")), // 03-30 00:00+02:00
            message("g", "2026-03-30T22:00:00Z", u("u3")) // 03-31: after
          ])
          const overview = yield* UsageOverview
          expect(yield* overview.activity(workspace, range)).toEqual([
            { day: "2026-03-28", messages: 2, activeUsers: 2, inputTokens: 20, outputTokens: 40 },
            { day: "2026-03-29", messages: 2, activeUsers: 1, inputTokens: 20, outputTokens: 40 },
            { day: "2026-03-30", messages: 1, activeUsers: 1, inputTokens: 10, outputTokens: 20 }
          ])
          expect(yield* overview.activity(yield* newWorkspace, range)).toEqual([])
        }))

      it.effect("counts active users as the ledger holds them in every kind of zone, whatever the batches", () =>
        Effect.gen(function*() {
          const workspace = yield* newWorkspace
          // Deterministic pseudo-random messages over two DST seasons, in batches out of order.
          let seed = 7
          const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
          const windows = [Date.parse("2026-03-26T00:00:00Z"), Date.parse("2026-10-22T00:00:00Z")]
          const events = Array.from({ length: 600 }, (_, i) => ({
            at: windows[i % 2]! + Math.floor(next() * 14 * 96) * 900_000 + Math.floor(next() * 900_000),
            user: `u${Math.floor(next() * next() * 40)}`,
            id: `z${i}`
          }))
          for (let b = 5; b >= 0; b--) {
            yield* ingest(workspace, events.filter((_, i) => i % 6 === b).map((e) => message(e.id, new Date(e.at).toISOString(), { user: { id: e.user } })))
          }
          const overview = yield* UsageOverview
          const zones = ["UTC", "Europe/Berlin", "America/Los_Angeles", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham"]
          for (const timezone of zones) {
            for (const [from, to] of [["2026-03-25", "2026-04-10"], ["2026-10-21", "2026-11-06"]] as const) {
              const start = DateTime.fromISO(from, { zone: timezone }).toMillis()
              const end = DateTime.fromISO(to, { zone: timezone }).toMillis()
              const byDay = new Map<string, { messages: number; users: Set<string> }>()
              for (const e of events.filter((e) => e.at >= start && e.at < end)) {
                const local = DateTime.fromMillis(e.at, { zone: timezone }).toFormat("yyyy-MM-dd")
                const sum = byDay.get(local) ?? { messages: 0, users: new Set<string>() }
                sum.messages++
                sum.users.add(e.user)
                byDay.set(local, sum)
              }
              const expected = [...byDay.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([d, sum]) => [d, sum.messages, sum.users.size])
              const answer = yield* overview.activity(workspace, { from, to, timezone })
              expect(answer.map((r) => [r.day, r.messages, r.activeUsers]), `${timezone} ${from}`).toEqual(expected)
            }
          }
        }))

      it.effect("refuses an empty, reversed or too long range", () =>
        Effect.gen(function*() {
          const overview = yield* UsageOverview
          const workspace = yield* newWorkspace
          const refused = (from: string, to: string) => Effect.flip(overview.activity(workspace, { from, to, timezone: "UTC" }))
          expect(yield* refused("2026-03-28", "2026-03-28")).toMatchObject({ _tag: "InvalidUsageRange", field: "to" })
          expect(yield* refused("2026-03-28", "2026-03-01")).toMatchObject({ _tag: "InvalidUsageRange", field: "to" })
          expect(yield* refused("2024-01-01", "2026-01-01")).toMatchObject({ _tag: "InvalidUsageRange", field: "to" })
          expect(yield* refused("yesterday", "2026-01-01")).toMatchObject({ _tag: "InvalidUsageRange", field: "from" })
        }))
    })
  })
