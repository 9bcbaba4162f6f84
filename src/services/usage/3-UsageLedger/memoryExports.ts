/**
 * The five export reads over the in-memory ledger: the same rows, cells and order as the SQL of
 * exportQueries.ts, computed in TypeScript. Numbers are cut the way PostgreSQL cuts them:
 * `numeric` rounding half away from zero on exact decimals (costs, rates, averages), `double`
 * rounding half to even (the continuous 95th percentile). Only entity-days with activity give a row.
 */
import { DateTime } from "luxon"
import { formatInZone } from "../../../domain/datePoint"
import type { ExportKind } from "../../../domain/exportLayouts"
import type { CatalogPrice, ExportQueryInput } from "./exportQueries"
import type { ValueRow } from "./contract"
import { fixed, roundedQuotient, scaled } from "./decimal"
import { pgWallTimeToInstant } from "./localTime"
import type { MemoryDimension, MemoryMessage, MemoryRun, MemoryWorkspaceLedger } from "./memoryStore"

const DAY_MS = 86_400_000

// ---------------------------------------------------------------------------------------------
// Local days, as `date_trunc('day', t AT TIME ZONE zone)` and back

interface LocalDay {
  /** `YYYY-MM-DD`: sorts as the days do. */
  readonly key: string
  readonly periodStart: string
  readonly periodEnd: string
}

/** Local days of one export: an event's day and hour, each day's clipped bounds formatted once. */
const makeDays = (input: ExportQueryInput) => {
  const from = input.from.getTime()
  const to = input.to.getTime()
  const days = new Map<string, LocalDay>()
  const localOf = (instant: number) => DateTime.fromMillis(instant, { zone: input.zone })
  const dayOf = (instant: number): LocalDay => {
    const local = localOf(instant)
    const key = local.toFormat("yyyy-MM-dd")
    const known = days.get(key)
    if (known !== undefined) return known
    const midnight = Date.UTC(local.year, local.month - 1, local.day)
    const start = pgWallTimeToInstant(midnight, input.zone)
    const end = pgWallTimeToInstant(midnight + DAY_MS, input.zone)
    const day = {
      key,
      periodStart: formatInZone(new Date(Math.max(start, from)), input.zone),
      periodEnd: formatInZone(new Date(Math.min(end, to)), input.zone)
    }
    days.set(key, day)
    return day
  }
  return {
    inRange: (instant: number) => instant >= from && instant < to,
    dayOf,
    hourOf: (instant: number) => localOf(instant).hour
  }
}

// ---------------------------------------------------------------------------------------------
// Numbers as PostgreSQL computes them

/** Exact decimal prices: USD per million tokens × 10^PRICE_SCALE. */
const PRICE_SCALE = 12

interface ScaledPrice {
  readonly provider: string
  readonly input: bigint
  readonly output: bigint
}

/** One price per model; with duplicates the first (the SQL takes an arbitrary one). */
const priceTable = (catalog: ReadonlyArray<CatalogPrice>): ReadonlyMap<string, ScaledPrice> => {
  const prices = new Map<string, ScaledPrice>()
  for (const price of catalog) {
    if (!prices.has(price.model)) {
      prices.set(price.model, {
        provider: price.provider,
        input: scaled(price.inputUsdPerMillion, PRICE_SCALE),
        output: scaled(price.outputUsdPerMillion, PRICE_SCALE)
      })
    }
  }
  return prices
}

/** `round(sum(tokens × USD per million) / 1000000, 6)` from a sum at PRICE_SCALE. */
const usdOfPriced = (sum: bigint): string => fixed(roundedQuotient(sum, 10n ** BigInt(PRICE_SCALE)), 6)

/** `round(avg(x))` of integers, half away from zero. */
const roundedAverage = (values: ReadonlyArray<number>): number =>
  Number(roundedQuotient(BigInt(values.reduce((a, b) => a + b, 0)), BigInt(values.length)))

/** double precision `round`: half to even. */
const roundHalfEven = (x: number): number => {
  const r = Math.round(x)
  return Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : r
}

/** `percentile_cont(p) WITHIN GROUP (ORDER BY x::double precision)`, as PostgreSQL interpolates. */
const percentileCont = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const position = p * (sorted.length - 1)
  const first = Math.floor(position)
  const second = Math.ceil(position)
  const low = sorted[first]!
  return first === second ? low : low + (sorted[second]! - low) * (position - first)
}

/** Byte order of UTF-8, as `COLLATE "C"`. */
const compareC = (a: string, b: string): number => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"))

/** `string_agg(DISTINCT x COLLATE "C", ';' ORDER BY x COLLATE "C")`: null when every value is null. */
const distinctList = (values: Iterable<string | null>): string | null => {
  const present = [...new Set([...values].filter((v): v is string => v !== null))].sort(compareC)
  return present.length === 0 ? null : present.join(";")
}

const distinctCount = <A>(values: Iterable<A | null>): number => new Set([...values].filter((v) => v !== null)).size

// ---------------------------------------------------------------------------------------------
// Grouping

/** Groups items by local day and a key, days ascending, keys in the given order within a day. */
const groupByDay = <A, K>(
  items: Iterable<A>,
  dayOf: (item: A) => LocalDay,
  keyOf: (item: A) => K,
  compareKeys: (a: K, b: K) => number
): Array<{ readonly day: LocalDay; readonly key: K; readonly items: Array<A> }> => {
  const groups = new Map<string, { day: LocalDay; key: K; items: Array<A> }>()
  for (const item of items) {
    const day = dayOf(item)
    const key = keyOf(item)
    const id = `${day.key}\u0000${JSON.stringify(key)}`
    const group = groups.get(id)
    if (group === undefined) groups.set(id, { day, key, items: [item] })
    else group.items.push(item)
  }
  return [...groups.values()].sort((a, b) => (a.day.key < b.day.key ? -1 : a.day.key > b.day.key ? 1 : compareKeys(a.key, b.key)))
}

const byRef = (a: number, b: number) => a - b

const byRefs = (dimension: ReadonlyMap<string, MemoryDimension>): ReadonlyMap<number, MemoryDimension> =>
  new Map([...dimension.values()].map((d) => [d.ref, d]))

const sumOf = <A>(items: ReadonlyArray<A>, value: (item: A) => number): number => items.reduce((total, item) => total + value(item), 0)

// ---------------------------------------------------------------------------------------------
// The five layouts

type Days = ReturnType<typeof makeDays>

const users = (ledger: MemoryWorkspaceLedger, days: Days, messages: ReadonlyArray<MemoryMessage>): Array<ValueRow> => {
  const people = byRefs(ledger.dimensions.users)
  return groupByDay(messages, (m) => days.dayOf(m.occurredAt), (m) => m.userRef, byRef).map(({ day, items, key }) => {
    const user = people.get(key)!
    const hours = items.map((m) => days.hourOf(m.occurredAt))
    const first = items.reduce((a, b) => (b.occurredAt < a.occurredAt ? b : a))
    const last = items.reduce((a, b) => (b.occurredAt > a.occurredAt ? b : a))
    return [
      day.periodStart,
      day.periodEnd,
      user.externalId,
      user.values["email"] ?? null,
      user.values["name"] ?? null,
      items.length,
      distinctCount(items.map((m) => m.conversationId)),
      distinctCount(items.map((m) => m.assistantRef)),
      distinctCount(items.map((m) => m.projectRef)),
      distinctList(items.map((m) => m.feature)),
      distinctList(items.map((m) => m.model)),
      new Set(hours).size,
      days.hourOf(first.occurredAt),
      days.hourOf(last.occurredAt),
      sumOf(items, (m) => m.inputTokens),
      sumOf(items, (m) => m.outputTokens)
    ]
  })
}

const assistants = (ledger: MemoryWorkspaceLedger, days: Days, messages: ReadonlyArray<MemoryMessage>): Array<ValueRow> => {
  const known = byRefs(ledger.dimensions.assistants)
  const withAssistant = messages.filter((m) => m.assistantRef !== null)
  return groupByDay(withAssistant, (m) => days.dayOf(m.occurredAt), (m) => m.assistantRef!, byRef).map(({ day, items, key }) => {
    const assistant = known.get(key)!
    return [
      day.periodStart,
      day.periodEnd,
      assistant.externalId,
      assistant.values["name"] ?? null,
      items.length,
      distinctCount(items.map((m) => m.userRef)),
      distinctCount(items.map((m) => m.conversationId)),
      sumOf(items, (m) => m.inputTokens),
      sumOf(items, (m) => m.outputTokens)
    ]
  })
}

const workflows = (ledger: MemoryWorkspaceLedger, days: Days, runs: ReadonlyArray<MemoryRun>): Array<ValueRow> => {
  const known = byRefs(ledger.dimensions.workflows)
  return groupByDay(runs, (r) => days.dayOf(r.startedAt), (r) => r.workflowRef, byRef).map(({ day, items, key }) => {
    const workflow = known.get(key)!
    const durations = items.map((r) => r.finishedAt - r.startedAt)
    const succeeded = items.filter((r) => r.status === "succeeded").length
    return [
      day.periodStart,
      day.periodEnd,
      workflow.externalId,
      workflow.values["name"] ?? null,
      items.length,
      succeeded,
      items.filter((r) => r.status === "failed").length,
      fixed(roundedQuotient(BigInt(succeeded) * 10_000n, BigInt(items.length)), 4),
      Math.min(...durations),
      roundedAverage(durations),
      roundHalfEven(percentileCont(durations, 0.95)),
      Math.max(...durations),
      distinctCount(items.map((r) => r.userRef))
    ]
  })
}

interface ProjectActivity {
  readonly at: number
  readonly projectRef: number
  readonly userRef: number | null
  readonly messages: number
  readonly runs: number
  readonly inputTokens: number
  readonly outputTokens: number
  /** Tokens × USD per million, at PRICE_SCALE. */
  readonly cost: bigint
}

const pricedAt = (prices: ReadonlyMap<string, ScaledPrice>, model: string, inputTokens: number, outputTokens: number): bigint => {
  const price = prices.get(model)
  return price === undefined ? 0n : BigInt(inputTokens) * price.input + BigInt(outputTokens) * price.output
}

const projects = (
  ledger: MemoryWorkspaceLedger,
  days: Days,
  messages: ReadonlyArray<MemoryMessage>,
  runs: ReadonlyArray<MemoryRun>,
  prices: ReadonlyMap<string, ScaledPrice>
): Array<ValueRow> => {
  const known = byRefs(ledger.dimensions.projects)
  const activity: Array<ProjectActivity> = [
    ...messages.filter((m) => m.projectRef !== null).map((m) => ({
      at: m.occurredAt,
      projectRef: m.projectRef!,
      userRef: m.userRef,
      messages: 1,
      runs: 0,
      inputTokens: m.inputTokens,
      outputTokens: m.outputTokens,
      cost: pricedAt(prices, m.model, m.inputTokens, m.outputTokens)
    })),
    ...runs.filter((r) => r.projectRef !== null).map((r) => ({
      at: r.startedAt,
      projectRef: r.projectRef!,
      userRef: r.userRef,
      messages: 0,
      runs: 1,
      inputTokens: 0,
      outputTokens: 0,
      cost: 0n
    }))
  ]
  return groupByDay(activity, (a) => days.dayOf(a.at), (a) => a.projectRef, byRef).map(({ day, items, key }) => {
    const project = known.get(key)!
    return [
      day.periodStart,
      day.periodEnd,
      project.externalId,
      project.values["name"] ?? null,
      sumOf(items, (a) => a.messages),
      sumOf(items, (a) => a.runs),
      distinctCount(items.map((a) => a.userRef)),
      sumOf(items, (a) => a.inputTokens),
      sumOf(items, (a) => a.outputTokens),
      usdOfPriced(items.reduce((total, a) => total + a.cost, 0n))
    ]
  })
}

type ModelKey = readonly [
  source: string,
  model: string,
  provider: string | null,
  region: string | null,
  byok: string | null,
  deployment: string | null
]

/** `ORDER BY source, model, provider, region, byok, deployment` (each COLLATE "C"; NULLs last). */
const byModelKey = (a: ModelKey, b: ModelKey): number => {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? null
    const y = b[i] ?? null
    if (x === y) continue
    if (x === null) return 1
    if (y === null) return -1
    const order = compareC(x, y)
    if (order !== 0) return order
  }
  return 0
}

const models = (
  ledger: MemoryWorkspaceLedger,
  days: Days,
  messages: ReadonlyArray<MemoryMessage>,
  prices: ReadonlyMap<string, ScaledPrice>
): Array<ValueRow> => {
  const requests = [...ledger.requests.values()].filter((r) => days.inRange(r.createdAt.getTime()))
  const platform = groupByDay(messages, (m) => days.dayOf(m.occurredAt), (m) => m.model, compareC).map(({ day, items, key }) => {
    const inputTokens = sumOf(items, (m) => m.inputTokens)
    const outputTokens = sumOf(items, (m) => m.outputTokens)
    const row: ValueRow = [
      day.periodStart,
      day.periodEnd,
      "platform",
      key,
      prices.get(key)?.provider ?? null,
      null,
      items.length,
      0,
      inputTokens,
      outputTokens,
      usdOfPriced(pricedAt(prices, key, inputTokens, outputTokens)),
      null,
      null,
      null,
      null
    ]
    return { day, key: ["platform", key, prices.get(key)?.provider ?? null, null, null, null] as ModelKey, row }
  })
  const api = groupByDay(
    requests,
    (r) => days.dayOf(r.createdAt.getTime()),
    (r): ModelKey => ["api", r.model, r.provider, r.region, String(r.byok), r.deployment ?? null],
    byModelKey
  ).map(({ day, items, key }) => {
    // Each cost as numeric(18, 8) keeps it, summed, then to 6 decimals.
    const cost = items.reduce((total, r) => total + scaled(r.costUsd, 8), 0n)
    const row: ValueRow = [
      day.periodStart,
      day.periodEnd,
      "api",
      key[1],
      key[2],
      key[3],
      items.length,
      // A stream cut by an upstream failure was answered 200 but failed; a cancelled one did not fail.
      items.filter((r) => r.status >= 400 || r.outcome === "failed").length,
      sumOf(items, (r) => r.inputTokens),
      sumOf(items, (r) => r.outputTokens),
      fixed(roundedQuotient(cost, 100n), 6),
      roundedAverage(items.map((r) => Math.round(r.latencyMs))),
      key[4],
      items.filter((r) => r.clamped).length,
      key[5]
    ]
    return { day, key, row }
  })
  return [...platform, ...api]
    .sort((a, b) => (a.day.key < b.day.key ? -1 : a.day.key > b.day.key ? 1 : byModelKey(a.key, b.key)))
    .map(({ row }) => row)
}

/** The rows of one export, in file order. */
export const memoryExportRows = (
  ledger: MemoryWorkspaceLedger | undefined,
  kind: ExportKind,
  input: ExportQueryInput
): ReadonlyArray<ValueRow> => {
  if (ledger === undefined) return []
  const days = makeDays(input)
  const messages = [...ledger.messages.values()].filter((m) => days.inRange(m.occurredAt))
  const runs = [...ledger.runs.values()].filter((r) => days.inRange(r.startedAt))
  switch (kind) {
    case "users":
      return users(ledger, days, messages)
    case "assistants":
      return assistants(ledger, days, messages)
    case "workflows":
      return workflows(ledger, days, runs)
    case "projects":
      return projects(ledger, days, messages, runs, priceTable(input.catalog))
    case "models":
      return models(ledger, days, messages, priceTable(input.catalog))
  }
}
