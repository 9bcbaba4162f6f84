/**
 * Realistic, deterministic demo activity for a workspace: users, assistants, projects and workflows,
 * and months of message events and workflow runs with a daily rhythm (office hours, a dip at lunch,
 * quiet nights) and a weekly one (weekends at a fifth of a weekday). The same options always give
 * the same events, ids included, so seeding twice adds nothing the second time.
 *
 * Events come out in the wire shape of `POST /admin/workspaces/{id}/events`, day by day, from a
 * generator: millions of them never sit in memory at once.
 */
import { IANAZone } from "luxon"
import { wallTimeToInstant } from "../domain/datePoint"

export interface DemoOptions {
  /** Seed of the pseudo-random generator. */
  readonly seed: number
  readonly users: number
  readonly assistants: number
  readonly projects: number
  readonly workflows: number
  /** First local day, `YYYY-MM-DD`, and the number of days. */
  readonly startDate: string
  readonly days: number
  /** IANA zone whose office hours and weekends the activity follows. */
  readonly zone: string
  /** How many events in total (messages and workflow runs): exactly this many are generated. */
  readonly events: number
  /** Mean messages of a user on a day the user is active (at least 1). */
  readonly messagesPerActiveDay: number
  /** Share of the events that are workflow runs (0 to 1). */
  readonly workflowRunShare: number
}

export const defaultDemoOptions: DemoOptions = {
  seed: 1,
  users: 200,
  assistants: 12,
  projects: 20,
  workflows: 8,
  startDate: "2026-01-01",
  days: 90,
  zone: "Europe/Berlin",
  events: 100_000,
  messagesPerActiveDay: 6,
  workflowRunShare: 0.05
}

export interface DemoUser {
  readonly id: string
  readonly email: string
  readonly name: string
}

export interface DemoEntity {
  readonly id: string
  readonly name: string
}

export interface DemoMessage {
  readonly type: "message"
  readonly id: string
  readonly occurredAt: string
  readonly user: DemoUser
  readonly assistant?: DemoEntity
  readonly project?: DemoEntity
  readonly model: string
  readonly inputTokens: number
  readonly outputTokens: number
  readonly feature: string
  readonly conversationId: string
}

export interface DemoWorkflowRun {
  readonly type: "workflow_run"
  readonly id: string
  readonly workflow: DemoEntity
  readonly startedAt: string
  readonly finishedAt: string
  readonly status: "succeeded" | "failed"
  readonly user?: DemoUser
  readonly project?: DemoEntity
}

export type DemoEvent = DemoMessage | DemoWorkflowRun

/** mulberry32: small, fast, good enough for demo data, and reproducible across machines. */
const randomSource = (seed: number) => {
  let state = seed >>> 0
  return (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

type Random = () => number

const pick = <A>(random: Random, items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!

/** Index with a Zipf-like skew: a few popular items, a long tail. */
const skewedIndex = (random: Random, count: number): number => Math.min(count - 1, Math.floor(count * random() ** 2.2))

/** Poisson-distributed count (Knuth for small means, normal approximation above). */
const poisson = (random: Random, mean: number): number => {
  if (mean <= 0) return 0
  if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * gaussian(random)))
  const limit = Math.exp(-mean)
  let k = 0
  let p = 1
  do {
    k++
    p *= random()
  } while (p > limit)
  return k - 1
}

const gaussian = (random: Random): number =>
  Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())

const logNormal = (random: Random, median: number, spread: number): number => median * Math.exp(spread * gaussian(random))

const firstNames = ["Ada", "Ben", "Chloé", "Dara", "Emil", "Fatima", "Gus", "Hana", "Ivo", "Jana", "Kofi", "Lena", "Mats", "Nora", "Omar", "Pia", "Quinn", "Rosa", "Sven", "Tara", "Uma", "Vik", "Wen", "Yusuf", "Zoë"]
const lastNames = ["Abara", "Berg", "Costa", "Dietz", "Eriksen", "Fischer", "García", "Hoang", "Ivanova", "Jensen", "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quispe", "Rossi", "Schmidt", "Tanaka", "Unger", "Vargas", "Weber", "Yilmaz", "Zimmer"]
const assistantNames = ["Research Helper", "Contract Reviewer", "Support Drafts", "Code Buddy", "Marketing Copy", "HR Policies", "Sales Coach", "Data Analyst", "Translator", "Meeting Notes", "Onboarding Guide", "Security Advisor"]
const projectNames = ["Website Relaunch", "Q1 Planning", "Customer Portal", "Data Platform", "Mobile App", "Brand Refresh", "Partner Program", "Cost Review", "Hiring 2026", "Support Knowledge Base"]
const workflowNames = ["Nightly Report", "Ticket Triage", "Invoice Extraction", "Lead Enrichment", "Weekly Digest", "Translation Batch", "Contract Summary", "Changelog Draft"]
const features = ["chat", "chat", "chat", "chat", "search", "search", "code", "file_upload", "image"]
// Weighted by how often a workspace would use them.
const models = [
  "chatgen-4o", "chatgen-4o", "chatgen-4o", "chatgen-4o-mini", "chatgen-4o-mini", "chatgen-4.1", "chatgen-5-mini", "o3-mini",
  "assistantmodel-sonnet-4-5-20250929", "assistantmodel-sonnet-4-5-20250929", "assistantmodel-3-7-sonnet-20250219", "codemodel-2501"
]

/**
 * `total` shared out in proportion to the weights, in whole numbers that add up to it exactly (largest
 * remainders first; ties to the earlier entry).
 */
export const apportion = (total: number, weights: ReadonlyArray<number>): Array<number> => {
  const sum = weights.reduce((a, b) => a + b, 0)
  if (sum <= 0 || weights.length === 0) return weights.map(() => 0)
  const exact = weights.map((w) => (total * w) / sum)
  const shares = exact.map(Math.floor)
  const byRemainder = exact.map((x, i) => [x - shares[i]!, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1])
  const missing = total - shares.reduce((a, b) => a + b, 0)
  for (let k = 0; k < missing; k++) shares[byRemainder[k]![1]]!++
  return shares
}

const cumulative = (weights: ReadonlyArray<number>): Array<number> => {
  let running = 0
  return weights.map((w) => (running += w))
}

/** An index drawn in proportion to the weights whose running sums are given (binary search). */
const weightedIndex = (random: Random, sums: ReadonlyArray<number>): number => {
  const target = random() * (sums[sums.length - 1] ?? 0)
  let low = 0
  let high = sums.length - 1
  while (low < high) {
    const middle = (low + high) >> 1
    if (sums[middle]! > target) high = middle
    else low = middle + 1
  }
  return low
}

/** Relative activity per local hour: office hours, a lunch dip, quiet nights. */
const hourWeights = [0.02, 0.01, 0.01, 0.01, 0.01, 0.03, 0.1, 0.35, 0.8, 1, 1, 0.9, 0.55, 0.8, 1, 0.95, 0.85, 0.6, 0.35, 0.25, 0.2, 0.15, 0.08, 0.04]
const hourTotal = hourWeights.reduce((a, b) => a + b, 0)
/** Monday … Sunday. */
const weekdayWeights = [1, 1, 1, 0.95, 0.85, 0.2, 0.12]

const sampleHour = (random: Random): number => {
  let target = random() * hourTotal
  for (let hour = 0; hour < 24; hour++) {
    target -= hourWeights[hour]!
    if (target <= 0) return hour
  }
  return 23
}

const named = (names: ReadonlyArray<string>, index: number, prefix: string): DemoEntity => {
  const base = names[index % names.length]!
  const round = Math.floor(index / names.length)
  return { id: `${prefix}-${String(index + 1).padStart(4, "0")}`, name: round === 0 ? base : `${base} ${round + 1}` }
}

export const demoUsers = (options: DemoOptions): ReadonlyArray<DemoUser> =>
  Array.from({ length: options.users }, (_, index) => {
    const first = firstNames[index % firstNames.length]!
    const last = lastNames[Math.floor(index / firstNames.length) % lastNames.length]!
    const id = `user-${String(index + 1).padStart(6, "0")}`
    const ascii = (text: string) => text.normalize("NFD").replace(/[^A-Za-z]/g, "").toLowerCase()
    return { id, email: `${ascii(first)}.${ascii(last)}.${index + 1}@demo.example`, name: `${first} ${last}` }
  })

/** The local day's events, one day after another. */
export function* demoEvents(options: DemoOptions): Generator<DemoEvent> {
  for (const day of demoDays(options)) yield* day
}

/** Day by day: each element is one local day's events (a few thousand at most per day for the default sizes). */
export function* demoDays(options: DemoOptions): Generator<ReadonlyArray<DemoEvent>> {
  const random = randomSource(options.seed)
  const zone = IANAZone.create(options.zone)
  const users = demoUsers(options)
  const assistants = Array.from({ length: options.assistants }, (_, i) => named(assistantNames, i, "asst"))
  const projects = Array.from({ length: options.projects }, (_, i) => named(projectNames, i, "proj"))
  const workflows = Array.from({ length: options.workflows }, (_, i) => named(workflowNames, i, "wf"))
  // Some people use it every day, most now and then.
  const propensity = users.map(() => 0.25 + 0.75 * random() ** 0.7)
  const favouriteAssistant = users.map(() => skewedIndex(random, Math.max(1, assistants.length)))
  const homeProject = users.map(() => skewedIndex(random, Math.max(1, projects.length)))
  const workflowMedianMs = workflows.map(() => logNormal(random, 20_000, 1))

  const perActiveDay = Math.max(1, options.messagesPerActiveDay)
  // Exactly options.events: the totals are shared out over the days by their weekday weight first, then
  // each day draws that many (a user's share by propensity, a run's workflow at random).
  const runTotal = workflows.length === 0 ? 0 : Math.round(options.events * options.workflowRunShare)
  const messageTotal = options.events - runTotal
  const [year, month, dayOfMonth] = options.startDate.split("-").map(Number) as [number, number, number]
  const firstDay = Date.UTC(year, month - 1, dayOfMonth)
  const weekdayOf = (day: number) => weekdayWeights[(new Date(firstDay + day * 86_400_000).getUTCDay() + 6) % 7]!
  const dayWeights = Array.from({ length: options.days }, (_, day) => weekdayOf(day))
  const messagesOfDay = apportion(messageTotal, dayWeights)
  const runsOfDay = apportion(runTotal, dayWeights)
  const cumulativePropensity = cumulative(propensity)

  for (let day = 0; day < options.days; day++) {
    const localMidnight = firstDay + day * 86_400_000
    const hourStarts = Array.from({ length: 24 }, (_, hour) => wallTimeToInstant(localMidnight + hour * 3_600_000, zone))
    const at = (hour: number) => new Date(hourStarts[hour]! + Math.floor(random() * 3_600_000))
    const events: Array<DemoEvent> = []

    // A user drawn twice on a day continues their numbering, so every id stays unique.
    const sentToday = new Map<number, number>()
    for (let left = messagesOfDay[day]!; left > 0;) {
      const u = weightedIndex(random, cumulativePropensity)
      const user = users[u]!
      const count = Math.min(left, 1 + poisson(random, perActiveDay - 1))
      const first = sentToday.get(u) ?? 0
      sentToday.set(u, first + count)
      left -= count
      for (let n = first; n < first + count; n++) {
        const useAssistant = assistants.length > 0 && random() < 0.6
        const inProject = projects.length > 0 && random() < 0.45
        events.push({
          type: "message",
          id: `msg-${day}-${u}-${n}`,
          occurredAt: at(sampleHour(random)).toISOString(),
          user,
          ...(useAssistant
            ? { assistant: assistants[random() < 0.7 ? favouriteAssistant[u]! : skewedIndex(random, assistants.length)]! }
            : {}),
          ...(inProject ? { project: projects[random() < 0.8 ? homeProject[u]! : skewedIndex(random, projects.length)]! } : {}),
          model: pick(random, models),
          inputTokens: Math.round(logNormal(random, 350, 0.9)),
          outputTokens: Math.round(logNormal(random, 450, 0.8)),
          feature: pick(random, features),
          conversationId: `conv-${day}-${u}-${Math.floor(n / 4)}`
        })
      }
    }

    const runsToday = new Map<number, number>()
    for (let r = 0; r < runsOfDay[day]!; r++) {
      const w = Math.floor(random() * workflows.length)
      const n = runsToday.get(w) ?? 0
      runsToday.set(w, n + 1)
      const started = at(sampleHour(random))
      const withUser = users.length > 0 && random() < 0.6
      const inProject = projects.length > 0 && random() < 0.5
      events.push({
        type: "workflow_run",
        id: `run-${day}-${w}-${n}`,
        workflow: workflows[w]!,
        startedAt: started.toISOString(),
        finishedAt: new Date(started.getTime() + Math.round(logNormal(random, workflowMedianMs[w]!, 0.6))).toISOString(),
        status: random() < 0.92 ? "succeeded" : "failed",
        ...(withUser ? { user: users[skewedIndex(random, users.length)]! } : {}),
        ...(inProject ? { project: projects[skewedIndex(random, projects.length)]! } : {})
      })
    }
    yield events
  }
}
