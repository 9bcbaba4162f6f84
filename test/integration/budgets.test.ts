import ProviderBClient from "@anthropic-ai/sdk"
import ProviderAClient from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, createWorkspace, type PostgresApp, startApp, testAdminToken } from "../support/app"
import { query } from "../support/database"
import { eventually } from "../support/fakeUpstream"
import { type RedisServer, startRedis } from "../support/redis"

/**
 * Budgets on the real service over PostgreSQL, with the official client libraries (docs/budgets.md): concurrent
 * requests never spend more than a budget, on one instance or two sharing the database; a stream cut half-way
 * settles to what it produced; the key list's spentUsd.
 */

const model = "chatgen-4o-mini"
// The price table's (config/prices.json): US dollars per million tokens.
const prices = { input: 0.15, output: 0.6 }
const maxTokens = 1_000
/** Each request writes its whole maximum output, slowly enough that the burst's requests overlap. */
const prompt = `Write a long story. [simulator output_tokens=${maxTokens} latency_ms=400]`
/** A request's largest possible cost: its maximum output and a prompt far above this one's (under 100 tokens). */
const costCeiling = (maxTokens * prices.output + 100 * prices.input) / 1_000_000
/** Room for 4.5 requests: four fit, the fifth never does. */
const budgetUsd = 4.5 * costCeiling

const client = (app: PostgresApp, key: string) =>
  new ProviderAClient({ apiKey: key, baseURL: `${app.url}/provider_a/eu/v1`, maxRetries: 0 })

const createKey = async (app: PostgresApp, workspaceId: string, body: Record<string, unknown>) => {
  const created = await call(app, "POST", `/admin/workspaces/${workspaceId}/api-keys`, {
    token: testAdminToken,
    body: { name: "budgeted", scopes: ["COMPLETION_API"], ...body }
  })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  return created.body as { id: string; key: string; budget: unknown; spentUsd: number | null; expiresAt: string | null }
}

/** Sends `count` chat completions at once, spread over the apps; the outcome of each: "ok" or the error code. */
const burst = (apps: ReadonlyArray<PostgresApp>, key: string, count: number) =>
  Promise.all(Array.from({ length: count }, (_, i) =>
    client(apps[i % apps.length]!, key).chat.completions.create({
      model,
      max_tokens: maxTokens,
      messages: [{ role: "user", content: prompt }]
    }).then(
      () => "ok",
      (error: { status?: number; code?: string }) => `${error.status} ${error.code}`
    )))

const ledgerCost = async (app: PostgresApp, workspaceId: string) => {
  const [row] = await query<{ rows: string; cost: string }>(
    app.databaseUrl,
    "SELECT count(*)::text AS rows, coalesce(sum(cost_usd), 0)::text AS cost FROM api_requests WHERE workspace_id = $1",
    [workspaceId]
  )
  return { rows: Number(row!.rows), cost: Number(row!.cost) }
}

const budgetSpent = async (app: PostgresApp, workspaceId: string) => {
  const [row] = await query<{ spent: string; held: string }>(
    app.databaseUrl,
    `SELECT coalesce((SELECT sum(spent_nano) FROM budget_periods WHERE budget_key LIKE $1), 0)::text AS spent,
            coalesce((SELECT sum(amount_nano) FROM budget_reservations WHERE budget_key LIKE $1 AND expires_at > now()), 0)::text AS held`,
    [`{${workspaceId}}:%`]
  )
  return { spent: Number(row!.spent) / 1e9, held: Number(row!.held) / 1e9 }
}

describe("budgets on one instance over PostgreSQL", () => {
  let app: PostgresApp
  beforeAll(async () => {
    app = await startApp({}, { stores: "postgres" })
  })
  afterAll(async () => {
    await app?.stop()
  })

  it("admit 4 of 30 concurrent requests on a workspace budget of 4.5, spend no more than it, and refuse the rest with budget_exceeded", async () => {
    const workspace = await createWorkspace(app, "Capped", { timezone: "Europe/Berlin", budget: { amountUsd: budgetUsd, period: "day" } })
    const { key } = await createKey(app, workspace.id, {})
    const outcomes = await burst([app], key, 30)
    expect(outcomes.filter((o) => o === "ok")).toHaveLength(4)
    expect(outcomes.filter((o) => o !== "ok")).toEqual(Array(26).fill("429 budget_exceeded"))
    // Every request recorded and settled: what the ledger bills is what the budget counts, within the amount.
    const ledger = await eventually(() => ledgerCost(app, workspace.id), (l) => l.rows === 4)
    const budget = await eventually(() => budgetSpent(app, workspace.id), (b) => b.held === 0 && b.spent > 0)
    expect(ledger.cost).toBeLessThanOrEqual(budgetUsd)
    expect(budget.spent).toBeCloseTo(ledger.cost, 7)

    // The refusal as a client sees it: names the budget, its amount, period and reset; retry-after until the reset.
    const refused = await call(app, "POST", "/provider_a/eu/v1/chat/completions", {
      token: key,
      body: { model, max_tokens: maxTokens, messages: [{ role: "user", content: "hello" }] }
    })
    expect(refused.status).toBe(429)
    expect(refused.body.error.code).toBe("budget_exceeded")
    expect(refused.body.error.message).toMatch(/workspace's budget of \$0\.0028 per day/)
    expect(refused.body.error.message).toMatch(/resets at \d{4}-\d{2}-\d{2}T00:00:00\+0[12]:00 \(Europe\/Berlin\)/)
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(86_400)
    expect(refused.headers.get("x-should-retry")).toBe("false")
  })

  it("settle a stream cancelled half-way to what it produced, and show it as the key's spentUsd", async () => {
    const workspace = await createWorkspace(app, "Streams")
    const { id, key } = await createKey(app, workspace.id, { budget: { amountUsd: 1, period: "month" } })
    const provider_b = new ProviderBClient({ apiKey: key, baseURL: `${app.url}/provider_b/eu`, maxRetries: 0 })
    const stream = provider_b.messages.stream({
      model: "assistantmodel-sonnet-4-5-20250929",
      max_tokens: 400,
      messages: [{ role: "user", content: "Tell a story. [simulator output_tokens=400 chunk_tokens=10 chunk_delay_ms=40]" }]
    })
    let deltas = 0
    for await (const event of stream) {
      if (event.type === "content_block_delta" && ++deltas === 10) break
    }
    // Billed for what was generated before the cut: far less than the 400 tokens it could have written.
    const [row] = await eventually(
      () => query<{ output_tokens: number; cost_usd: string }>(app.databaseUrl, "SELECT output_tokens, cost_usd::text FROM api_requests WHERE key_id = $1", [id]),
      (rows) => rows.length === 1
    )
    expect(row!.output_tokens).toBeGreaterThan(0)
    expect(row!.output_tokens).toBeLessThan(400)
    const listed = await eventually(
      () => call(app, "GET", `/admin/workspaces/${workspace.id}/api-keys`, { token: testAdminToken }),
      (answer) => answer.body.data[0].spentUsd > 0 && Number(row!.cost_usd) > 0
    )
    const view = listed.body.data[0]
    expect(view.spentUsd).toBeCloseTo(Number(row!.cost_usd), 7)
    expect(view.budget).toEqual({ amountUsd: 1, period: "month" })
    expect((await budgetSpent(app, workspace.id)).held).toBe(0)
  })
})

describe("budgets across two instances sharing PostgreSQL", () => {
  let first: PostgresApp
  let second: PostgresApp
  beforeAll(async () => {
    first = await startApp({}, { stores: "postgres" })
    second = await startApp({ DATABASE_URL: first.databaseUrl }, { stores: "postgres" })
  })
  afterAll(async () => {
    await second?.stop()
    await first?.stop()
  })

  it("admit 4 of 30 concurrent requests on a key budget of 4.5 in total, never 4 per instance", async () => {
    const workspace = await createWorkspace(first, "Shared")
    const { id, key } = await createKey(first, workspace.id, { budget: { amountUsd: budgetUsd, period: "week", alertThresholds: [0.5, 1] } })
    const outcomes = await burst([first, second], key, 30)
    expect(outcomes.filter((o) => o === "ok")).toHaveLength(4)
    const ledger = await eventually(() => ledgerCost(first, workspace.id), (l) => l.rows === 4)
    expect(ledger.cost).toBeLessThanOrEqual(budgetUsd)
    const listed = await eventually(
      () => call(second, "GET", `/admin/workspaces/${workspace.id}/api-keys`, { token: testAdminToken }),
      (answer) => Math.abs(answer.body.data[0].spentUsd - ledger.cost) < 1e-7
    )
    expect(listed.body.data[0]).toMatchObject({ id, spentUsd: expect.any(Number), expiresAt: null })
  })
})

describe("budgets across two instances sharing Redis (RATE_LIMIT_STORE=redis)", () => {
  let redis: RedisServer
  let first: PostgresApp
  let second: PostgresApp
  beforeAll(async () => {
    redis = await startRedis()
    const shared = { RATE_LIMIT_STORE: "redis", REDIS_URL: redis.url }
    first = await startApp(shared, { stores: "postgres" })
    second = await startApp({ ...shared, DATABASE_URL: first.databaseUrl }, { stores: "postgres" })
  })
  afterAll(async () => {
    await second?.stop()
    await first?.stop()
    await redis?.stop()
  })

  it("admit 4 of 30 concurrent requests on a workspace budget of 4.5 in total, and refuse with 503 while Redis is down", async () => {
    const workspace = await createWorkspace(first, "Redis", { budget: { amountUsd: budgetUsd, period: "month" } })
    const { key } = await createKey(first, workspace.id, {})
    const outcomes = await burst([first, second], key, 30)
    expect(outcomes.filter((o) => o === "ok")).toHaveLength(4)
    const ledger = await eventually(() => ledgerCost(first, workspace.id), (l) => l.rows === 4)
    expect(ledger.cost).toBeLessThanOrEqual(budgetUsd)
    await redis.stop()
    try {
      expect(await burst([second], key, 1)).toEqual(["503 budget_unavailable"])
    } finally {
      await redis.start()
    }
  })
})
