import type { Page, Route } from "playwright-core"

/** A canned console API answer: status and JSON body. */
export interface Answer {
  readonly status: number
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

export type Handler = (request: { readonly method: string; readonly path: string; readonly query: URLSearchParams; readonly body: unknown }) => Answer | undefined

/**
 * Answers the page's /console/api/ calls from a handler (what the pages are tested against before and
 * apart from the real API); any call it does not know is 404 so a missing stub is visible.
 */
export const stubConsoleApi = async (page: Page, handler: Handler): Promise<Array<string>> => {
  const calls: Array<string> = []
  await page.route("**/console/api/**", async (route: Route) => {
    const request = route.request()
    const url = new URL(request.url())
    const path = url.pathname.replace(/^.*\/console\/api\//, "")
    const text = request.postData()
    calls.push(`${request.method()} ${path}`)
    const answer = handler({ method: request.method(), path, query: url.searchParams, body: text === null ? undefined : JSON.parse(text) })
      ?? { status: 404, body: { error: { code: "not_found", message: `no stub for ${request.method()} ${path}` } } }
    await route.fulfill({
      status: answer.status,
      contentType: "application/json",
      headers: answer.headers ?? {},
      body: answer.body === undefined ? "" : JSON.stringify(answer.body)
    })
  })
  return calls
}

const dayMs = 86_400_000
/** A date `daysAgo` days before today (UTC), as the overview's default range holds it. */
export const daysAgo = (days: number): string => new Date(Date.now() - days * dayMs).toISOString().slice(0, 10)

export const adminSession = {
  member: { id: "p1", email: "ada@example.com", name: "Ada Admin" },
  operator: false,
  workspaces: [{ id: "ws1", name: "Acme Research", role: "admin" }]
}

export const memberSession = {
  member: { id: "p2", email: "max@example.com", name: "Max Member" },
  operator: false,
  workspaces: [{ id: "ws1", name: "Acme Research", role: "member" }]
}

export const operatorSession = { member: null, operator: true, workspaces: [] }

export const usageRows = [
  { day: daysAgo(3), group: "chatgen-4o", requests: 12, inputTokens: 1200, outputTokens: 3400, costUsd: 0.0412 },
  { day: daysAgo(3), group: "assistantmodel-3-5-sonnet-20240620", requests: 5, inputTokens: 800, outputTokens: 900, costUsd: 0.0165 },
  { day: daysAgo(2), group: "chatgen-4o", requests: 20, inputTokens: 2000, outputTokens: 5000, costUsd: 0.07 },
  { day: daysAgo(1), group: "codemodel-2501", requests: 7, inputTokens: 300, outputTokens: 700, costUsd: 0.003 }
]

export const activityRows = [
  { day: daysAgo(4), messages: 40, activeUsers: 6, inputTokens: 4000, outputTokens: 9000 },
  { day: daysAgo(2), messages: 55, activeUsers: 8, inputTokens: 5000, outputTokens: 12000 }
]

export const apiKeys = [
  {
    id: "k1", name: "billing-service", displayPrefix: "wsk_3f9a…", scopes: ["COMPLETION_API", "USAGE_EXPORT_API"],
    createdAt: "2026-10-02T09:30:00Z", revokedAt: null, lastUsedAt: "2026-11-20T14:00:00Z", createdBy: "ada@example.com",
    budget: { amountUsd: 20, period: "week", alertThresholds: [0.8, 1] }, spentUsd: 3.5, expiresAt: "2027-03-31T12:00:00Z"
  },
  {
    id: "k2", name: "old-bot", displayPrefix: "wsk_77c1…", scopes: ["COMPLETION_API"],
    createdAt: "2026-06-11T08:00:00Z", revokedAt: "2026-09-01T10:00:00Z", lastUsedAt: null, createdBy: "operator",
    budget: null, spentUsd: null, expiresAt: null
  }
]

export const settings = {
  anonymizeUsers: false,
  leaderboardsEnabled: true,
  workflowsEnabled: true,
  byokModels: { provider_a: ["chatgen-4o"] },
  rateLimits: {},
  timezone: "Europe/Berlin",
  budget: { amountUsd: 50, period: "month" },
  limits: [
    { family: "chat_completions", model: null, requestsPerMinute: 600, tokensPerMinute: 200000, remainingRequests: 588, remainingTokens: 191200 },
    { family: "usage_export", model: null, requestsPerMinute: 10, tokensPerMinute: 0, remainingRequests: 10, remainingTokens: null }
  ]
}

export const members = [
  { id: "p1", email: "ada@example.com", name: "Ada Admin", role: "admin", status: "active", createdAt: "2026-10-01T09:00:00Z" },
  { id: "p2", email: "max@example.com", name: "Max Member", role: "member", status: "active", createdAt: "2026-10-03T09:00:00Z" },
  { id: "p3", email: "new@example.com", name: null, role: "member", status: "invited", createdAt: "2026-11-22T09:00:00Z" }
]

export const auditEntries = [
  { at: "2026-11-22T09:00:00Z", actor: "ada@example.com", action: "member.invited", target: "new@example.com", address: "10.0.0.7" },
  { at: "2026-11-21T16:12:00Z", actor: "ada@example.com", action: "api_key.created", target: "billing-service", address: "10.0.0.7" },
  { at: "2026-11-21T16:10:00Z", actor: "ada@example.com", action: "session.signed_in", target: null, address: "10.0.0.7" }
]

/** Every route's deployments as GET upstreams answers: one cooling (until 14:03:12 UTC), the others available. */
export const upstreams = [
  {
    route: "provider_a/eu", deployment: "azure-sweden", kind: "azure", state: "cooling", coolingUntil: "2026-11-20T14:03:12.000Z",
    lastError: "answered 429", requests: 1840, failures: 3
  },
  { route: "provider_a/eu", deployment: "provider-a-eu", kind: "native", state: "available", requests: 12, failures: 0 },
  { route: "provider_a/us", deployment: "provider-a-us", kind: "native", state: "available", requests: 530, failures: 0 },
  {
    route: "provider_b/eu", deployment: "bedrock-frankfurt", kind: "bedrock", state: "available",
    lastError: "unreachable: ECONNREFUSED", requests: 977, failures: 1
  },
  { route: "provider_b/us", deployment: "vertex-us-east5", kind: "vertex", state: "available", requests: 204, failures: 0 },
  { route: "provider_c/eu", deployment: "simulator-provider_c-eu", kind: "native", state: "available", requests: 0, failures: 0 }
]

export const webhooks = [
  { id: "wh1", url: "https://hooks.example.com/budgets", events: ["budget.threshold_reached"], createdAt: `${daysAgo(9)}T08:30:00.000Z` }
]

export const webhookDeliveries = [
  { eventId: "evt_5f0c2a9be1d34f7a8c6b0e2d4f1a3b5c", type: "budget.threshold_reached", attempt: 1, status: "pending", at: `${daysAgo(0)}T12:05:00.000Z`, responseStatus: null },
  { eventId: "evt_0b7e4c1d9a2f4e6b8d3c5a7f1e9b2d4c", type: "budget.threshold_reached", attempt: 2, status: "delivered", at: `${daysAgo(1)}T09:10:05.000Z`, responseStatus: 200 },
  { eventId: "evt_0b7e4c1d9a2f4e6b8d3c5a7f1e9b2d4c", type: "budget.threshold_reached", attempt: 1, status: "failed", at: `${daysAgo(1)}T09:10:00.000Z`, responseStatus: 503, error: "the receiver answered 503" }
]
/** The workspace's budget this month: spent, and held by requests in progress. */
export const budgetStatus = {
  budget: settings.budget,
  spentUsd: 31.25,
  reservedUsd: 4.5,
  periodStart: "2026-10-31T23:00:00.000Z",
  resetAt: "2026-11-30T23:00:00.000Z"
}
