import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabaseUrl } from "../support/database"
import { type RedisServer, startRedis } from "../support/redis"
import { call, createKey, createWorkspace, type RunningApp, startApp, testAdminToken } from "../support/app"

/**
 * Issue 24, finding 2, on the real service and PostgreSQL: failed credentials slow down guessing and
 * never refuse a valid credential. Every request here comes from 127.0.0.1, as from behind one NAT;
 * where a test needs other client addresses, the service trusts 127.0.0.1 as its proxy (TRUSTED_PROXIES)
 * and the test names them in X-Forwarded-For.
 */

const chatBody = { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] }
const exportBody = { from: { date: "2026-01-01T00:00:00", timezone: "UTC" }, to: { date: "2026-01-31T00:00:00", timezone: "UTC" } }

const from = (address: string | undefined) => (address === undefined ? {} : { headers: { "x-forwarded-for": address } })
const chat = (app: RunningApp, key: string | undefined, address?: string) =>
  call(app, "POST", "/provider_a/eu/v1/chat/completions", { ...(key === undefined ? {} : { token: key }), body: chatBody, ...from(address) })
const models = (app: RunningApp, key: string) => call(app, "GET", "/provider_a/eu/v1/models", { token: key })
const exportUsers = (app: RunningApp, key: string) => call(app, "POST", "/export/users", { token: key, body: exportBody })
const adminGet = (app: RunningApp, token: string, workspaceId: string) => call(app, "GET", `/admin/workspaces/${workspaceId}`, { token })

/** A key that was valid once: what a client with an old configuration keeps sending. */
const staleKey = async (app: RunningApp, workspaceId: string) => {
  const stale = await createKey(app, workspaceId, ["COMPLETION_API"], "stale")
  const revoked = await call(app, "DELETE", `/admin/workspaces/${workspaceId}/api-keys/${stale.id}`, { token: testAdminToken })
  expect(revoked.status).toBe(200)
  return stale.key
}

/** Asks until the answer's status is the wanted one (a few seconds at most). */
const eventually = async (ask: () => Promise<{ status: number }>, wanted: (status: number) => boolean) => {
  let last = 0
  for (let attempt = 0; attempt < 60; attempt++) {
    last = (await ask()).status
    if (wanted(last)) return last
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return last
}

describe.each([{ lane: true }, { lane: false }])("failed credentials behind one address (forwarding lane: $lane)", ({ lane }) => {
  let app: RunningApp
  let workspaceId: string
  let valid: string
  let exporter: string
  let stale: string

  beforeAll(async () => {
    // The throttle and the keys of one instance: memory stores (the Redis case below shares a database).
    app = await startApp({ AUTH_FAILURE_LIMIT: "5", AUTH_FAILURE_WINDOW_SECONDS: "60" }, { forwardingLane: lane })
    workspaceId = (await createWorkspace(app)).id
    valid = (await createKey(app, workspaceId, ["COMPLETION_API"])).key
    exporter = (await createKey(app, workspaceId, ["USAGE_EXPORT_API"])).key
    stale = await staleKey(app, workspaceId)
  })
  afterAll(async () => {
    await app?.stop()
  })

  it("the NAT neighbour: a client's stale key is 429 past the limit, the neighbour's valid keys and the admin token lose nothing", async () => {
    const staleAnswers: Array<number> = []
    const neighbourAnswers: Array<number> = []
    for (let i = 0; i < 30; i++) {
      const refused = await chat(app, stale)
      staleAnswers.push(refused.status)
      if (refused.status === 429) {
        expect(refused.body.error).toMatchObject({ type: "rate_limit_error", code: "too_many_failed_credentials" })
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
      }
      neighbourAnswers.push((await chat(app, valid)).status)
    }
    expect(staleAnswers).toEqual([...Array(5).fill(401), ...Array(25).fill(429)])
    expect(neighbourAnswers).toEqual(Array(30).fill(200))
    // The HttpApi app's routes answer alike: a stale key 429, valid keys (the export key included) pass.
    expect((await models(app, stale)).status).toBe(429)
    expect((await models(app, valid)).status).toBe(200)
    const exported = await exportUsers(app, exporter)
    expect(exported.body).toMatchObject({ success: false, error: { code: "no_data" } })
    expect((await adminGet(app, testAdminToken, workspaceId)).status).toBe(200)
    // No key at all, or a valid key without the scope, is no failed credential: 401 as always.
    expect((await chat(app, undefined)).body.error).toMatchObject({ code: expect.not.stringMatching(/too_many/) })
    expect((await chat(app, undefined)).status).toBe(401)
    expect((await exportUsers(app, valid)).status).toBe(401)
    // Admin tokens are counted apart: the API keys' failures did not spend theirs.
    const guesses: Array<number> = []
    for (let i = 0; i < 7; i++) guesses.push((await adminGet(app, `guess-${i}-0123456789abcdef`, workspaceId)).status)
    expect(guesses).toEqual([...Array(5).fill(401), 429, 429])
    expect((await adminGet(app, testAdminToken, workspaceId)).status).toBe(200)
    expect((await chat(app, valid)).status).toBe(200)
  })
})

describe("failed credentials counted in Redis by two instances", () => {
  let redis: RedisServer
  let a: RunningApp
  let b: RunningApp

  beforeAll(async () => {
    redis = await startRedis()
    const env = { DATABASE_URL: await freshDatabaseUrl(), RATE_LIMIT_STORE: "redis", REDIS_URL: redis.url, AUTH_FAILURE_LIMIT: "6" }
    a = await startApp(env, { stores: "postgres" })
    b = await startApp(env, { stores: "postgres" })
  })
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await redis?.stop()
  })

  it("share one count: three failures on each instance spend a limit of six on both; keys are known on both", async () => {
    const workspaceId = (await createWorkspace(a)).id
    const valid = (await createKey(a, workspaceId, ["COMPLETION_API"])).key
    const guesses: Array<number> = []
    for (let i = 0; i < 3; i++) {
      guesses.push((await chat(a, `wsk_${"a".repeat(42)}${i}`)).status)
      guesses.push((await chat(b, `wsk_${"b".repeat(42)}${i}`)).status)
    }
    expect(guesses).toEqual(Array(6).fill(401))
    // Counted per instance, each would be at three of six.
    expect((await chat(a, `wsk_${"c".repeat(43)}`)).status).toBe(429)
    expect((await chat(b, `wsk_${"c".repeat(43)}`)).status).toBe(429)
    // A valid key passes on both: at once where it was created, on the other as soon as that one learns of
    // it (within a second: the key changes it reads every second), and from then on every time.
    expect((await chat(a, valid)).status).toBe(200)
    expect(await eventually(() => chat(b, valid), (status) => status === 200)).toBe(200)
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => chat(i % 2 === 0 ? a : b, valid)))
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200))
    const fresh = await createKey(a, workspaceId, ["COMPLETION_API"], "fresh")
    expect((await chat(a, fresh.key)).status).toBe(200)
    expect(await eventually(() => chat(b, fresh.key), (status) => status === 200)).toBe(200)
    // A key revoked on one instance stops passing on the other promptly (and is then a guess: 429 here).
    await call(b, "DELETE", `/admin/workspaces/${workspaceId}/api-keys/${fresh.id}`, { token: testAdminToken })
    expect(await eventually(() => chat(a, fresh.key), (status) => status !== 200)).not.toBe(200)
    expect(await eventually(() => chat(a, fresh.key), (status) => status === 429)).toBe(429)
  })
})

describe("failed credentials from rotating addresses (behind a trusted proxy)", () => {
  let app: RunningApp
  let workspaceId: string
  let valid: string

  beforeAll(async () => {
    // The defaults: 20 an address, 100 a network, 1,000 in all, a minute.
    app = await startApp({ TRUSTED_PROXIES: "127.0.0.1" })
    workspaceId = (await createWorkspace(app)).id
    valid = (await createKey(app, workspaceId, ["COMPLETION_API"])).key
  })
  afterAll(async () => {
    await app?.stop()
  })

  it("2,000 guesses from 100 addresses of one network: the network's bound stops them at 100", async () => {
    const answers: Record<number, number> = {}
    for (let round = 0; round < 20; round++) {
      const batch = await Promise.all(
        Array.from({ length: 100 }, (_, i) => chat(app, `wsk_${String(round).padStart(2, "0")}${"x".repeat(41)}`, `203.0.113.${i + 1}`))
      )
      for (const { status } of batch) answers[status] = (answers[status] ?? 0) + 1
    }
    expect(answers).toEqual({ 401: 100, 429: 1_900 })
    // Valid keys pass from that network, and from everywhere else.
    expect((await chat(app, valid, "203.0.113.7")).status).toBe(200)
    expect((await chat(app, valid, "198.51.100.7")).status).toBe(200)
  }, 120_000)

  it("2,000 guesses from 100 networks: the ceiling of all addresses stops them at 1,000", async () => {
    const answers: Record<number, number> = {}
    for (let round = 0; round < 20; round++) {
      const batch = await Promise.all(
        Array.from({ length: 100 }, (_, i) => chat(app, `wsk_${String(round).padStart(2, "0")}${"y".repeat(41)}`, `10.${i}.${round}.1`))
      )
      for (const { status } of batch) answers[status] = (answers[status] ?? 0) + 1
    }
    // The first test's 100 failures count in the same minute's ceiling.
    expect(answers).toEqual({ 401: 900, 429: 1_100 })
    expect((await chat(app, valid, "10.200.0.1")).status).toBe(200)
    // Admin tokens have their own counts: the operator is not refused.
    expect((await adminGet(app, testAdminToken, workspaceId)).status).toBe(200)
    expect((await adminGet(app, "a-wrong-admin-token-0123", workspaceId)).status).toBe(401)
  }, 120_000)
})
